/** Tables owned by the platform capability. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PlatformTables {}
