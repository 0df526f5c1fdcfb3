import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { serve } from '../server.js'
import { numberedIds, placeMsAt, startSimulation } from '../sim/simulation.js'
import { adminAuthorization, DEMO_HISTORY_HOURS, historyStored, machinesWithPlacements } from './demo-history.js'
import { DEMO_KPI_GATE, DEMO_WORSE_FIRMWARE, demoFirmwareKeys, startDemoRollout } from './demo-rollout.js'

const DEMO_USERS = {
  admin: { password: 'admin', role: 'admin', display_name: 'Administrator' },
  operator: { password: 'operator', role: 'user', display_name: 'Operator' },
}

/** The demo machines' rating (contract §16): chip shooters; they place at 90 % of it (a demo board in under 7 s). */
const DEMO_RATED_CPH = 36_000
/** The demo machines start their first job after this (a firmware offer lands first) and change boards in this. */
const DEMO_AUTO_JOBS = { firstJobAfterMs: 12_000, boardChangeMs: 4_000 }
/** pnp-02's feeder F3 (100nF) misses one pick in 20: the production page shows it at the top of its feeders. */
const DEMO_BAD_FEEDER = { machine: 'pnp-02', feeder: 'F3', rate: 0.05 }

/**
 * `fleetgate demo`: the server on the embedded default plus 3 simulated machines and 5
 * platform devices, for a five-minute tour. The machines report the last 12 hours of production
 * as late events (contract §16), one with a bad feeder, then place a demo board over and over; a
 * firmware rollout over them has a KPI gate, and the demo release makes the machines that
 * install it miss more, so the gate pauses the rollout (`kpi_regression`) after its first stage.
 * Stops on SIGINT/SIGTERM.
 */
export async function runDemoCommand(_argv: string[]): Promise<number> {
  const env = { ...process.env }
  const demoUsers = env.CLOUD_AUTH_USERS === undefined
  env.CLOUD_AUTH_USERS ??= JSON.stringify(DEMO_USERS)
  // A key pair for this run only signs the demo release (unless a root key of your own is configured).
  const firmware = env.FIRMWARE_ROOT_PUBKEY === undefined ? demoFirmwareKeys() : undefined
  if (firmware) env.FIRMWARE_ROOT_PUBKEY = firmware.rootPem
  // 37 characters: long enough for NODE_ENV=production too (at least 32).
  env.PLATFORM_CONSOLE_TOKEN ??= `demo-${randomBytes(24).toString('base64url')}`
  env.LOG_LEVEL ??= 'warn'
  const app = await serve(env)
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  const admin = { username: 'admin', password: DEMO_USERS.admin.password }
  const machineIds = numberedIds('pnp-', 3)
  const authorization = demoUsers ? await adminAuthorization(url, admin).catch(() => undefined) : undefined
  // A second run on the same data keeps the first's history rather than counting it twice.
  const earlier = authorization !== undefined && (await machinesWithPlacements(url, authorization, machineIds, DEMO_HISTORY_HOURS).catch(() => [])).length > 0
  const sim = await startSimulation({
    url,
    devices: 3,
    platform: 5,
    consoleToken: env.PLATFORM_CONSOLE_TOKEN,
    enrollToken: env.DEVICE_ENROLL_TOKEN || undefined,
    // Kept beside the database: the server trusts each machine's first key for good.
    keysFile: path.join(env.DATA_DIR ?? './data', 'demo-sim-keys.json'),
    machine: { placeMsPerItem: placeMsAt(DEMO_RATED_CPH) },
    production: {
      ratedCph: DEMO_RATED_CPH,
      autoJobs: DEMO_AUTO_JOBS,
      badFeeders: [DEMO_BAD_FEEDER],
      worseFirmware: DEMO_WORSE_FIRMWARE,
      historyHours: earlier ? 0 : DEMO_HISTORY_HOURS,
    },
    log: (level, message) => console.log(`[sim] ${level}: ${message}`),
  })
  await sim.registered()
  // The KPI gate counts only machines with placements before their offer: the rollout starts once the history is stored.
  if (authorization !== undefined && !earlier) await historyStored(url, authorization, machineIds, DEMO_HISTORY_HOURS, 30_000).catch(() => false)
  const rollout =
    firmware && demoUsers
      ? await startDemoRollout(url, admin, firmware.keys).catch((err: Error) => `no demo rollout: ${err.message}`)
      : 'no demo rollout: FIRMWARE_ROOT_PUBKEY or CLOUD_AUTH_USERS is your own'
  console.log(`
fleetgate demo is running
  web console     ${url}/          (open it in a browser; sign in as admin / admin)
  API             ${url}/api/v1    reference at ${url}/docs
  admin login     admin / admin      (gateway administrator: sees every machine)
  user login      operator / operator (sees machines after a device login with operator / operator)
  console token   ${env.PLATFORM_CONSOLE_TOKEN}   (X-Console-Token for /api/admin)
  machines        ${sim.machines.map((m) => m.deviceId).join(', ')}
  platform        ${sim.platformDevices.length} HTTP-polling devices
  firmware        ${rollout}
  production      ${url}/production — ${earlier ? `the machines' history from an earlier run is kept` : `each machine reported its last ${DEMO_HISTORY_HOURS} hours`}, and they place a demo
                  board over and over (rated ${DEMO_RATED_CPH} CPH); ${DEMO_BAD_FEEDER.machine}'s feeder ${DEMO_BAD_FEEDER.feeder} misses ${DEMO_BAD_FEEDER.rate * 100} % of its picks
                  (${url}/machines/${DEMO_BAD_FEEDER.machine}); a machine that installs the demo release misses ${DEMO_WORSE_FIRMWARE.missRate * 100} %, and the
                  rollout's KPI gate (at most +${DEMO_KPI_GATE.max_miss_rate_increase * 100} points after ${DEMO_KPI_GATE.min_placements} placements) pauses it: kpi_regression
Press Ctrl-C to stop.`)
  const stop = async () => {
    await sim.stop()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return -1
}
