import type { FoundationTables } from './tables/foundation-tables.js'
import type { GatewayTables } from './tables/gateway-tables.js'
import type { FirmwareTables } from './tables/firmware-tables.js'
import type { PlatformTables } from './tables/platform-tables.js'
import type { RolloutTables } from './tables/rollout-tables.js'
import type { ProductionTables } from './tables/production-tables.js'

/** The whole schema, as Kysely sees it: each capability owns one file under tables/. */
export interface Database extends FoundationTables, GatewayTables, FirmwareTables, PlatformTables, RolloutTables, ProductionTables {}
