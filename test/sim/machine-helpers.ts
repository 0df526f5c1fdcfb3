import type { HttpMethod } from '../../src/sdk/frames.js'
import { ManualClock } from '../../src/sim/machine/clock.js'
import { PickAndPlaceMachine, type MachineOptions } from '../../src/sim/machine/machine.js'

/** A machine on a manual clock, and a way to call it as the gateway would. */
export function testMachine(options: Partial<MachineOptions> = {}) {
  const clock = new ManualClock()
  const machine = new PickAndPlaceMachine({ deviceId: 'pnp-01', clock, ...options })
  // Answers are typed loosely on purpose: tests read whatever fields they check.
  const call = async (method: HttpMethod, path: string, body: unknown = null, query: Record<string, string> = {}) =>
    (await machine.routes.dispatch({ method, path, query, body, user: { id: 'admin', username: 'admin', role: 'admin' } })) as {
      status: number
      data: any
    }
  return { clock, machine, call }
}

export const ITEMS = [
  { component: '100nF', x: 10, y: 10, angle: 0 },
  { component: '10k', x: 20, y: 10, angle: 90 },
  { component: 'LED_Green', x: 30, y: 20, angle: 180 },
]
