/**
 * The Node.js versions fleetgate runs on: package.json `engines.node` (a test keeps the two equal).
 * The command line checks it before any native module loads: better-sqlite3 13 crashes older Node.
 */
export const REQUIRED_NODE = '>=22.12'
