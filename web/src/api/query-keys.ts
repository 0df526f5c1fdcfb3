/**
 * Query keys, one factory per feature: queries, mutations and the event router (events/)
 * all build keys here, so an event lands exactly where the data is cached.
 */
/**
 * A page of the machines list: machines whose id starts with `prefix` and that match the label
 * `selector` (§15; empty: all), after the cursor `after`.
 */
export interface MachineListFilter {
  prefix: string
  selector?: string
  after: string | null
}

export const machineKeys = {
  all: ['machines'] as const,
  lists: () => [...machineKeys.all, 'list'] as const,
  list: (filter: MachineListFilter) => [...machineKeys.lists(), { prefix: filter.prefix, selector: filter.selector ?? '', after: filter.after }] as const,
  /** How many machines a selector matches now (the "Start rollout" dialog's count). */
  selectorCounts: () => [...machineKeys.all, 'selector-count'] as const,
  selectorCount: (selector: string) => [...machineKeys.selectorCounts(), selector] as const,
  detail: (id: string) => [...machineKeys.all, 'detail', id] as const,
  overview: (id: string) => [...machineKeys.detail(id), 'overview'] as const,
  position: (id: string) => [...machineKeys.detail(id), 'position'] as const,
  task: (id: string) => [...machineKeys.detail(id), 'task'] as const,
  orders: (id: string) => [...machineKeys.detail(id), 'orders'] as const,
  serialLog: (id: string) => [...machineKeys.detail(id), 'serial-log'] as const,
  camera: (id: string, cam: 'up' | 'down') => [...machineKeys.detail(id), 'camera', cam] as const,
}

/** The label keys and values in use over the caller's machines (§15). */
export const labelKeys = {
  all: ['labels'] as const,
}

/** Production figures (§16): the fleet's by grouping and range, and each machine's. */
export const productionKeys = {
  all: ['production'] as const,
  fleet: (groupBy: string, range: string) => [...productionKeys.all, 'fleet', { groupBy, range }] as const,
  machine: (id: string) => [...productionKeys.all, 'machine', id] as const,
  figures: (id: string, range: string) => [...productionKeys.machine(id), 'figures', { range }] as const,
  series: (id: string, range: string) => [...productionKeys.machine(id), 'series', { range }] as const,
  jobs: (id: string) => [...productionKeys.machine(id), 'jobs'] as const,
  /** The machine's current state as the last §11 `machine-state` event said (kept by the event router only). */
  state: (id: string) => [...productionKeys.all, 'state', id] as const,
}

export const firmwareKeys = {
  all: ['firmware'] as const,
  releases: () => [...firmwareKeys.all, 'releases'] as const,
  downloads: () => [...firmwareKeys.all, 'downloads'] as const,
}

export const rolloutKeys = {
  all: ['rollouts'] as const,
  lists: () => [...rolloutKeys.all, 'list'] as const,
  /** The rollout with its machines, paged (an infinite query). */
  detail: (id: string) => [...rolloutKeys.all, 'detail', id] as const,
}

/** The audit log's filters (`action`, `actor`, `release_id` of GET /api/v1/admin/audit); absent: any. */
export interface AuditFilter {
  action?: string
  actor?: string
  release_id?: string
}

export const auditKeys = {
  all: ['audit'] as const,
  list: (filter: AuditFilter) => [...auditKeys.all, 'list', filter] as const,
}

export const platformKeys = {
  all: ['platform'] as const,
  summary: () => [...platformKeys.all, 'summary'] as const,
  devices: () => [...platformKeys.all, 'devices'] as const,
  devicePage: (after: string | null) => [...platformKeys.devices(), { after }] as const,
  device: (id: string) => [...platformKeys.all, 'device', id] as const,
  detail: (id: string) => [...platformKeys.device(id), 'detail'] as const,
  telemetry: (id: string, key: string, range: string) => [...platformKeys.device(id), 'telemetry', { key, range }] as const,
  deviceLogs: (id: string, level: string) => [...platformKeys.device(id), 'logs', { level }] as const,
  commands: (id: string) => [...platformKeys.device(id), 'commands'] as const,
  meta: () => [...platformKeys.all, 'meta'] as const,
  operationLog: () => [...platformKeys.all, 'operation-log'] as const,
}
