/** Why a rollout is paused: by an administrator, too many failed machines (§14), or its KPI gate found a regression (§16). */
export const PAUSE_REASONS = ['manual', 'failures', 'kpi_regression'] as const
export type PauseReason = (typeof PAUSE_REASONS)[number]
