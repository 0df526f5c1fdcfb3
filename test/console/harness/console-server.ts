import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { defaultConsoleDir } from '../../../src/console/console-routes.js'
import { startSimulation, type Simulation, type SimulationOptions } from '../../../src/sim/simulation.js'
import type { Env } from '../../../src/config/config.js'
import { startTestApp, type TestApp } from '../../helpers/test-app.js'

export interface ConsoleServer {
  /** http://127.0.0.1:<port> */
  url: string
  test: TestApp
  sim: Simulation
  close(): Promise<void>
}

export function assertConsoleBuilt(): string {
  const dir = defaultConsoleDir()
  if (!existsSync(path.join(dir, 'index.html'))) throw new Error(`${dir}/index.html is missing: run "npm run build:console" (npm test does)`)
  return dir
}

/**
 * A real server (SQLite, port 0) serving the built console, with simulated machines linked
 * to it (operator / operator is each machine's own account).
 */
export async function startConsoleServer(
  options: { env?: Env; machines?: number; platform?: number; sim?: Partial<SimulationOptions> } = {},
): Promise<ConsoleServer> {
  const consoleDir = assertConsoleBuilt()
  const test = await startTestApp('sqlite', options.env ?? {}, { consoleDir })
  await test.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = test.app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  const sim = await startSimulation({
    url,
    devices: options.machines ?? 2,
    platform: options.platform ?? 0,
    consoleToken: test.config.platformConsoleToken ?? undefined,
    keysFile: null,
    ...options.sim,
  })
  await sim.registered()
  return {
    url,
    test,
    sim,
    async close() {
      await sim.stop()
      await test.close()
    },
  }
}
