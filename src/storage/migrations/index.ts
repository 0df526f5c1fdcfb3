import type { Migration } from 'kysely/migration'
import type { MigrationContext, MigrationFactory } from './migration-context.js'
import { foundation } from './0001-foundation.js'
import { gateway } from './0002-gateway.js'
import { firmware } from './0003-firmware.js'
import { platform } from './0004-platform.js'
import { loginCounters } from './0005-login-counters.js'
import { cluster } from './0006-cluster.js'
import { rollouts } from './0007-rollouts.js'
import { instances } from './0008-instances.js'
import { linkClaims } from './0009-link-claims.js'
import { summaryCounts } from './0010-summary-counts.js'
import { keylessPoints } from './0011-keyless-points.js'
import { offerAnswers } from './0012-offer-answers.js'
import { rolloutTallies } from './0013-rollout-tallies.js'
import { deviceLabels } from './0014-device-labels.js'
import { revokedSessions } from './0015-revoked-sessions.js'
import { production } from './0016-production.js'
import { rolloutKpiGate } from './0017-rollout-kpi-gate.js'
import { productionRunningTotals } from './0018-production-running-totals.js'
import { productionEventsOneTimeIndex } from './0019-production-events-one-time-index.js'
import { windowTallies } from './0020-window-tallies.js'
import { deviceTallies } from './0021-device-tallies.js'
import { deviceRowRoom } from './0022-device-row-room.js'
import { pointRanges } from './0023-point-ranges.js'

/** Ordered by name; never rename or edit a migration that has shipped: add a new one. */
const FACTORIES: Record<string, MigrationFactory> = {
  '0001-foundation': foundation,
  '0002-gateway': gateway,
  '0003-firmware': firmware,
  '0004-platform': platform,
  '0005-login-counters': loginCounters,
  '0006-cluster': cluster,
  '0007-rollouts': rollouts,
  '0008-instances': instances,
  '0009-link-claims': linkClaims,
  '0010-summary-counts': summaryCounts,
  '0011-keyless-points': keylessPoints,
  '0012-offer-answers': offerAnswers,
  '0013-rollout-tallies': rolloutTallies,
  '0014-device-labels': deviceLabels,
  '0015-revoked-sessions': revokedSessions,
  '0016-production': production,
  '0017-rollout-kpi-gate': rolloutKpiGate,
  '0018-production-running-totals': productionRunningTotals,
  '0019-production-events-one-time-index': productionEventsOneTimeIndex,
  '0020-window-tallies': windowTallies,
  '0021-device-tallies': deviceTallies,
  '0022-device-row-room': deviceRowRoom,
  '0023-point-ranges': pointRanges,
}

export function migrationsFor(ctx: MigrationContext): Record<string, Migration> {
  return Object.fromEntries(Object.entries(FACTORIES).map(([name, make]) => [name, make(ctx)]))
}
