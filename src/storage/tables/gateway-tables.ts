/** Tables owned by the gateway capability. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface GatewayTables {}
