import { isIdentifier } from '@fleetgate/device-agent/protocol'
import { DeviceAgent, type BackoffOptions, type ProductionEventInput } from '@fleetgate/device-agent'
import { ControllerFirmwareHandler } from './machine/controller-firmware.js'
import { PickAndPlaceMachine, type MachineOptions } from './machine/machine.js'
import type { Operator } from './machine/operator-auth.js'
import { PlatformDevice, type PlatformDeviceIntervals, type SimLog } from './platform-device.js'
import { AutoJobs, type AutoJobOptions } from './production/auto-jobs.js'
import type { BadFeeder, WorseFirmware } from './production/miss-model.js'
import { ProductionMonitor } from './production/production-monitor.js'
import { seededRandom, seedFor } from './production/seeded-random.js'
import { SimKeys } from './sim-keys.js'

export const SIM_MACHINE_VERSION = '2.3.1-sim'

export interface SimulationOptions {
  /** Server base URL (http or ws). */
  url: string
  /** Pick-and-place machines to run. Default 3. */
  devices?: number
  /** Machine ids are `<prefix>01`, `<prefix>02`, … Default `pnp-`. */
  prefix?: string
  /** Accounts each machine accepts at `POST /auth/login`. Default operator:operator. */
  operators?: readonly Operator[]
  /** Platform (HTTP-polling) devices to run. Default 0. */
  platform?: number
  /** Platform device ids are `<platformPrefix>01`, … Default `<prefix>iot-`. */
  platformPrefix?: string
  /** Lets platform devices add themselves (`X-Console-Token`). */
  consoleToken?: string
  /** Sent at first registration when the gateway sets DEVICE_ENROLL_TOKEN. */
  enrollToken?: string
  /** Where keys and tokens are kept between runs; null keeps them in memory. Default `.sim-keys.json`. */
  keysFile?: string | null
  heartbeatSeconds?: number
  machine?: Omit<MachineOptions, 'deviceId' | 'operators'>
  platformIntervals?: PlatformDeviceIntervals
  /** Reconnect back-off of the machines' agents (default: the SDK's, 0.5 s doubling up to 30 s). */
  backoff?: BackoffOptions
  /** Simulated flashing time of a firmware offer. Default 3000. */
  firmwareInstallMs?: number
  /** Machines that report every firmware install `failed` (after downloading it). */
  failFirmware?: readonly string[]
  /** Resumption of the machines' firmware downloads (default: the SDK's, 1 s doubling up to 30 s). */
  firmwareDownloadBackoff?: BackoffOptions
  /** Production reporting (contract §16); none without it. */
  production?: SimProductionOptions
  log?: SimLog
}

/** What the simulated machines report of their production (contract §16, `fleetgate sim`). */
export interface SimProductionOptions {
  /** Share of picks that fail, 0–1. Default 0.003. */
  missRate?: number
  /** Feeders that miss at their own rate, on every machine or on the one named. */
  badFeeders?: readonly BadFeeder[]
  /** Rated placements per hour, sent at registration. Default 4000. */
  ratedCph?: number
  /** Seed of the misses drawn (each machine draws its own sequence from it). Default: random. */
  seed?: number
  /** A firmware release that makes the machines that install it place worse. */
  worseFirmware?: WorseFirmware
  /** Machines run jobs by themselves. Default: only when asked through the API. */
  autoJobs?: boolean | AutoJobOptions
  /** How often the machines look at their task, in real milliseconds. Default 1000. */
  tickMs?: number
  /**
   * Hours of production history (jobs of the demo board, with stops) each machine reports as
   * late events with their past `ts` when it starts, 0–696 (the gateway takes events up to
   * 30 days old). Default 0.
   */
  historyHours?: number
}

/** The most history a machine reports: 29 days, inside the 30 days the gateway accepts (§16). */
const MAX_HISTORY_HOURS = 29 * 24

export interface SimulatedMachine {
  deviceId: string
  machine: PickAndPlaceMachine
  agent: DeviceAgent
  /** Reports the machine's production; undefined without `production`. */
  production?: ProductionMonitor
  autoJobs?: AutoJobs
}

/**
 * Time to place one part at `ratedCph`, slowed to 90 %: a simulated machine places a bit below its
 * rating, as real ones do (OEE performance ≈ 0.9).
 */
export const placeMsAt = (ratedCph: number) => Math.round(3_600_000 / (ratedCph * 0.9))

export interface Simulation {
  machines: SimulatedMachine[]
  platformDevices: PlatformDevice[]
  /** Resolves once every machine has registered with the gateway at least once. */
  registered(): Promise<void>
  stop(): Promise<void>
}

/** The ids of `count` simulated machines or devices: `<prefix>01`, `<prefix>02`, … */
export const numberedIds = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')}`)

/** Starts simulated machines (linked over the device link) and platform devices; they keep retrying until stopped. */
export async function startSimulation(options: SimulationOptions): Promise<Simulation> {
  const prefix = options.prefix ?? 'pnp-'
  const log = options.log ?? (() => undefined)
  const machineIds = numberedIds(prefix, options.devices ?? 3)
  const platformIds = numberedIds(options.platformPrefix ?? `${prefix}iot-`, options.platform ?? 0)
  const badId = [...machineIds, ...platformIds].find((id) => !isIdentifier(id))
  if (badId) throw new Error(`"${badId}" is not a valid device id (1–64 of A–Z a–z 0–9 . _ : -)`)
  const strayFailing = options.failFirmware?.find((id) => !machineIds.includes(id))
  if (strayFailing) throw new Error(`failFirmware names "${strayFailing}", which is not one of the simulated machines`)
  const production = options.production
  const strayFeeder = production?.badFeeders?.find((f) => f.machine !== undefined && !machineIds.includes(f.machine))
  if (strayFeeder) throw new Error(`badFeeders names "${strayFeeder.machine}", which is not one of the simulated machines`)
  const historyHours = production?.historyHours ?? 0
  if (!(historyHours >= 0 && historyHours <= MAX_HISTORY_HOURS)) throw new Error(`historyHours must be 0–${MAX_HISTORY_HOURS}`)
  const seed = production?.seed ?? Math.floor(Math.random() * 2 ** 32)

  const keys = await SimKeys.open(options.keysFile === undefined ? '.sim-keys.json' : options.keysFile)
  const firstRegistrations: Promise<void>[] = []
  const failFirmware = new Set(options.failFirmware ?? [])
  const machines = machineIds.map((deviceId) => {
    const machine = new PickAndPlaceMachine({ firmwareVersion: SIM_MACHINE_VERSION, ...options.machine, deviceId, operators: options.operators })
    const firmware = new ControllerFirmwareHandler(machine, {
      installMs: options.firmwareInstallMs ?? 3000,
      fail: failFirmware.has(deviceId),
      relink: () => agent.relink(),
    })
    const agent: DeviceAgent = new DeviceAgent({
      url: options.url,
      deviceId,
      key: keys.machineKey(deviceId),
      hostname: deviceId,
      version: SIM_MACHINE_VERSION,
      enrollToken: options.enrollToken,
      routes: machine.routes,
      status: () => machine.status(),
      heartbeatSeconds: options.heartbeatSeconds,
      backoff: options.backoff,
      firmware: { handler: firmware, downloadBackoff: options.firmwareDownloadBackoff },
      ...(production && { ratedCph: production.ratedCph ?? 4000 }),
      log: (level, message) => log(level, `${deviceId}: ${message}`),
    })
    agent.on('registered', () => log('info', `${deviceId}: registered`))
    agent.on('firmware', ({ rollout_id, state, progress, error }) => {
      if (progress === undefined || progress === 0) log('info', `${deviceId}: firmware rollout ${rollout_id} ${state}${error ? `: ${error}` : ''}`)
    })
    agent.on('error', (err) => log('error', `${deviceId}: ${err.message}`))
    firstRegistrations.push(
      new Promise((resolve, reject) => {
        agent.once('registered', () => resolve())
        agent.once('stopped', ({ reason }) => reject(new Error(`${deviceId} stopped before registering (${reason})`)))
      }),
    )
    if (!production) return { deviceId, machine, agent }
    const report = (event: ProductionEventInput) => {
      try {
        agent.production.report(event)
      } catch (err) {
        // A bad event is the simulator's bug; it must not fail the request that moved the task.
        log('error', `${deviceId}: production event ${event.kind} not reported: ${(err as Error).message}`)
      }
    }
    const monitor = new ProductionMonitor(machine, report, {
      missRate: production.missRate,
      badFeeders: production.badFeeders?.filter((f) => f.machine === undefined || f.machine === deviceId),
      worseFirmware: production.worseFirmware,
      random: seededRandom(seedFor(seed, deviceId)),
    })
    agent.production.on('rejected', ({ event, error }) => log('warn', `${deviceId}: production event ${event.kind} rejected: ${error}`))
    const autoJobs = production.autoJobs ? new AutoJobs(machine, production.autoJobs === true ? {} : production.autoJobs) : undefined
    return { deviceId, machine, agent, production: monitor, autoJobs }
  })
  // Unobserved rejections must not crash the process when nobody awaits registered().
  for (const p of firstRegistrations) p.catch(() => undefined)

  const platformDevices = platformIds.map(
    (deviceId) =>
      new PlatformDevice({
        baseUrl: options.url.replace(/^ws(s?):/, 'http$1:'),
        deviceId,
        consoleToken: options.consoleToken,
        deviceToken: keys.platformToken(deviceId),
        onDeviceToken: (token) => {
          keys.setPlatformToken(deviceId, token)
          keys.save().catch((err: Error) => log('warn', `could not save keys: ${err.message}`))
        },
        intervals: options.platformIntervals,
        log,
      }),
  )

  await keys.save()
  for (const { agent, production: monitor, autoJobs } of machines) {
    if (historyHours > 0) monitor?.reportHistory(historyHours)
    monitor?.start(production?.tickMs)
    autoJobs?.start(production?.tickMs)
    agent.start()
  }
  for (const device of platformDevices) device.start()

  return {
    machines,
    platformDevices,
    registered: () => Promise.all(firstRegistrations).then(() => undefined),
    async stop() {
      for (const m of machines) {
        m.autoJobs?.stop()
        m.production?.stop()
      }
      await Promise.all([...machines.map((m) => m.agent.close()), ...platformDevices.map((d) => d.stop())])
      await keys.save()
    },
  }
}
