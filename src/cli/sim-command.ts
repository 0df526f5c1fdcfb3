import { parseArgs } from 'node:util'
import type { Operator } from '../sim/machine/operator-auth.js'
import { parseBadFeeders, parseRate, type BadFeeder } from '../sim/production/miss-model.js'
import { numberedIds, placeMsAt, startSimulation } from '../sim/simulation.js'

export { startSimulation, type Simulation, type SimulationOptions, type SimulatedMachine } from '../sim/simulation.js'

export const SIM_USAGE = `usage: fleetgate sim [options]

  --url URL              server base URL (default http://127.0.0.1:8080)
  --devices N            simulated pick-and-place machines (default 3)
  --prefix P             machine ids are P01, P02, … (default pnp-)
  --operator USER:PASS   operator account the machines accept at device login; repeatable
                         (default operator:operator)
  --platform N           HTTP-polling platform devices, ids <prefix>iot-01, … (default 0)
  --console-token T      lets platform devices add themselves (default $PLATFORM_CONSOLE_TOKEN)
  --enroll-token T       sent at first registration (default $DEVICE_ENROLL_TOKEN)
  --keys-file PATH       where machine keys and device tokens are kept (default .sim-keys.json)
  --fail-firmware IDS    comma-separated machine ids that report every firmware install failed;
                         repeatable (default none)

Production reporting (contract §16; the machines report states, jobs, placements and misses):
  --miss-rate R          share of picks that fail, 0–1 (default 0.003)
  --bad-feeder F:R       feeder F1…F12 that misses at rate R (0–1) on every machine, e.g. F3:0.05;
                         comma-separated or repeatable (default none)
  --rated-cph N          rated placements per hour, 1–1000000, sent at registration (default 4000);
                         the machines place at 90 % of it
  --auto-jobs            the machines place a demo board again and again by themselves
                         (default: only the tasks started through the API)
  --seed N               seed of the misses drawn, for a run that repeats (default random)
  --no-production        report no production (for a fleetgate without it)

Runs until SIGINT or SIGTERM.`

export interface SimArguments {
  url: string
  devices: number
  prefix: string
  operators: Operator[]
  platform: number
  consoleToken: string | undefined
  enrollToken: string | undefined
  keysFile: string
  /** Machines that report firmware installs `failed`. */
  failFirmware: string[]
  /** Production reporting; null with --no-production. */
  production: { missRate: number; badFeeders: BadFeeder[]; ratedCph: number; autoJobs: boolean; seed: number | undefined } | null
}

/** argv → options, or a message saying what is wrong. */
export function parseSimArguments(argv: string[], env: NodeJS.ProcessEnv = process.env): SimArguments | { error: string } | { help: true } {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string', default: 'http://127.0.0.1:8080' },
        devices: { type: 'string', default: '3' },
        prefix: { type: 'string', default: 'pnp-' },
        operator: { type: 'string', multiple: true },
        platform: { type: 'string', default: '0' },
        'console-token': { type: 'string' },
        'enroll-token': { type: 'string' },
        'keys-file': { type: 'string', default: '.sim-keys.json' },
        'fail-firmware': { type: 'string', multiple: true },
        'miss-rate': { type: 'string', default: '0.003' },
        'bad-feeder': { type: 'string', multiple: true },
        'rated-cph': { type: 'string', default: '4000' },
        'auto-jobs': { type: 'boolean', default: false },
        seed: { type: 'string' },
        'no-production': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (err) {
    return { error: (err as Error).message }
  }
  if (values.help) return { help: true }
  const count = (text: string) => (/^\d+$/.test(text) && Number(text) <= 999 ? Number(text) : undefined)
  const devices = count(values.devices)
  const platform = count(values.platform)
  if (devices === undefined) return { error: `--devices must be a whole number 0–999, got "${values.devices}"` }
  if (platform === undefined) return { error: `--platform must be a whole number 0–999, got "${values.platform}"` }
  if (!/^(https?|wss?):\/\/./.test(values.url)) return { error: `--url must be an http(s) or ws(s) URL, got "${values.url}"` }
  const operators: Operator[] = []
  for (const spec of values.operator ?? ['operator:operator']) {
    const colon = spec.indexOf(':')
    if (colon < 1 || colon === spec.length - 1) return { error: `--operator must be USER:PASS, got "${spec}"` }
    operators.push({ username: spec.slice(0, colon), password: spec.slice(colon + 1) })
  }
  const machineIds = new Set(numberedIds(values.prefix, devices))
  const failFirmware = (values['fail-firmware'] ?? []).flatMap((list) => list.split(',')).map((id) => id.trim()).filter((id) => id !== '')
  const stray = failFirmware.find((id) => !machineIds.has(id))
  if (stray !== undefined) return { error: `--fail-firmware: "${stray}" is not one of the simulated machines (${values.prefix}01 … with --devices ${devices})` }
  const missRate = parseRate(values['miss-rate'])
  if (missRate === undefined) return { error: `--miss-rate must be a number from 0 to 1, got "${values['miss-rate']}"` }
  const badFeeders = parseBadFeeders(values['bad-feeder'] ?? [])
  if ('error' in badFeeders) return badFeeders
  const ratedCph = /^\d+$/.test(values['rated-cph']) ? Number(values['rated-cph']) : NaN
  if (!(ratedCph >= 1 && ratedCph <= 1_000_000)) return { error: `--rated-cph must be a whole number 1–1000000, got "${values['rated-cph']}"` }
  const seed = values.seed === undefined ? undefined : /^\d+$/.test(values.seed) && Number(values.seed) < 2 ** 32 ? Number(values.seed) : NaN
  if (Number.isNaN(seed)) return { error: `--seed must be a whole number 0–4294967295, got "${values.seed}"` }
  return {
    url: values.url,
    devices,
    prefix: values.prefix,
    operators,
    platform,
    consoleToken: values['console-token'] ?? env.PLATFORM_CONSOLE_TOKEN,
    enrollToken: values['enroll-token'] ?? env.DEVICE_ENROLL_TOKEN,
    keysFile: values['keys-file'],
    failFirmware: [...new Set(failFirmware)],
    production: values['no-production'] ? null : { missRate, badFeeders, ratedCph, autoJobs: values['auto-jobs'], seed },
  }
}

const log = (level: 'info' | 'warn' | 'error', message: string) => {
  const line = `${new Date().toISOString()} sim ${level}: ${message}`
  if (level === 'info') console.log(line)
  else console.error(line)
}

/** `fleetgate sim …`: runs until SIGINT/SIGTERM, then closes every link; 0 on a clean stop, 2 on bad arguments. */
export async function runSimCommand(argv: string[]): Promise<number> {
  const args = parseSimArguments(argv)
  if ('help' in args) {
    console.log(SIM_USAGE)
    return 0
  }
  if ('error' in args) {
    console.error(`fleetgate sim: ${args.error}\n${SIM_USAGE}`)
    return 2
  }
  if (args.platform > 0 && !args.consoleToken) {
    log('warn', 'no --console-token: platform devices must already exist (or the server must auto-register them)')
  }
  const { production, ...rest } = args
  const simulation = await startSimulation({
    ...rest,
    ...(production && { production, machine: { placeMsPerItem: placeMsAt(production.ratedCph) } }),
    log,
  })
  log('info', `${args.devices} machine(s) linking to ${args.url} as ${simulation.machines.map((m) => m.deviceId).join(', ') || '—'}`)
  if (args.platform > 0) log('info', `${args.platform} platform device(s): ${simulation.platformDevices.map((d) => d.deviceId).join(', ')}`)
  log('info', `operators: ${args.operators.map((o) => o.username).join(', ')}; keys in ${args.keysFile}`)
  if (args.failFirmware.length > 0) log('info', `firmware installs will fail on ${args.failFirmware.join(', ')}`)
  if (production) {
    const bad = production.badFeeders.map((f) => `${f.feeder} at ${f.rate}`).join(', ')
    log('info', `production: rated ${production.ratedCph} CPH, miss rate ${production.missRate}${bad ? `, bad feeder(s) ${bad}` : ''}${production.autoJobs ? ', running jobs by themselves' : ''}`)
  }

  // A second signal while closing falls back to Node's default: exit at once.
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (received: NodeJS.Signals) => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      resolve(received)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
  log('info', `${signal}: closing`)
  await simulation.stop()
  return 0
}
