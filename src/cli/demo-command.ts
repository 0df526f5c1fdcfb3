import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { serve } from '../server.js'
import { startSimulation } from '../sim/simulation.js'

const DEMO_USERS = {
  admin: { password: 'admin', role: 'admin', display_name: 'Administrator' },
  operator: { password: 'operator', role: 'user', display_name: 'Operator' },
}

/**
 * `fleetgate demo`: the server on the embedded default plus 3 simulated machines and 5
 * platform devices, for a five-minute tour. Stops on SIGINT/SIGTERM.
 */
export async function runDemoCommand(_argv: string[]): Promise<number> {
  const env = { ...process.env }
  env.CLOUD_AUTH_USERS ??= JSON.stringify(DEMO_USERS)
  env.PLATFORM_CONSOLE_TOKEN ??= `demo-${randomBytes(9).toString('base64url')}`
  env.LOG_LEVEL ??= 'warn'
  const app = await serve(env)
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  const sim = await startSimulation({
    url,
    devices: 3,
    platform: 5,
    consoleToken: env.PLATFORM_CONSOLE_TOKEN,
    // Kept beside the database: the server trusts each machine's first key for good.
    keysFile: path.join(env.DATA_DIR ?? './data', 'demo-sim-keys.json'),
    log: (level, message) => console.log(`[sim] ${level}: ${message}`),
  })
  await sim.registered()
  console.log(`
fleetgate demo is running
  web console     ${url}/          (open it in a browser; sign in as admin / admin)
  API             ${url}/api/v1    reference at ${url}/docs
  admin login     admin / admin      (gateway administrator: sees every machine)
  user login      operator / operator (sees machines after a device login with operator / operator)
  console token   ${env.PLATFORM_CONSOLE_TOKEN}   (X-Console-Token for /api/admin)
  machines        ${sim.machines.map((m) => m.deviceId).join(', ')}
  platform        ${sim.platformDevices.length} HTTP-polling devices
Press Ctrl-C to stop.`)
  const stop = async () => {
    await sim.stop()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return -1
}
