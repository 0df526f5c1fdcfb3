import type { Figures, ProductionGroup, StateSeconds } from './production-types'

/** Test data shaped as §16's answers. */
export const seconds = (over: Partial<StateSeconds> = {}): StateSeconds => ({
  productive: 0, standby: 0, engineering: 0, scheduled_down: 0, unscheduled_down: 0, non_scheduled: 0, offline: 0, ...over,
})

export const figures = (over: Partial<Figures> = {}): Figures => ({
  seconds: seconds({ productive: 3600 }), placed: 4000, missed: 12, cph: 4000, availability: 0.9, performance: 1, quality: 0.997, oee: 0.8973, ...over,
})

export const group = (key: string | null, over: Partial<ProductionGroup> = {}): ProductionGroup => ({ key, devices: 1, ...figures(), ...over })
