import { parseArgs } from 'node:util'
import type { Operator } from '../sim/machine/operator-auth.js'
import { numberedIds, startSimulation } from '../sim/simulation.js'

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
  const simulation = await startSimulation({ ...args, log })
  log('info', `${args.devices} machine(s) linking to ${args.url} as ${simulation.machines.map((m) => m.deviceId).join(', ') || '—'}`)
  if (args.platform > 0) log('info', `${args.platform} platform device(s): ${simulation.platformDevices.map((d) => d.deviceId).join(', ')}`)
  log('info', `operators: ${args.operators.map((o) => o.username).join(', ')}; keys in ${args.keysFile}`)
  if (args.failFirmware.length > 0) log('info', `firmware installs will fail on ${args.failFirmware.join(', ')}`)

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
