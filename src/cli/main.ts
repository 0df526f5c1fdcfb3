#!/usr/bin/env node
import { satisfies } from 'semver'
import { ConfigError } from '../config/config-error.js'
import { REQUIRED_NODE } from './required-node.js'

const USAGE = `usage: fleetgate <command>

commands:
  serve                      run the server (npm start)
  sim [options]              simulated pick-and-place machines and platform devices (npm run sim)
  demo                       server on the embedded default plus simulated machines (npm run demo)
  cluster [--instances 3]    N instances behind nginx on local PostgreSQL and NATS (npm run cluster)
  firmware keygen|sign|verify  make and check signed firmware images (npm run firmware)
  hash-password              read a password (stdin, or asked without echo) and print a password_hash for CLOUD_AUTH_USERS`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'serve': {
      const { serve } = await import('../server.js')
      await serve()
      return -1
    }
    case 'sim': {
      const { runSimCommand } = await import('./sim-command.js')
      return runSimCommand(rest)
    }
    case 'demo': {
      const { runDemoCommand } = await import('./demo-command.js')
      return runDemoCommand(rest)
    }
    case 'cluster': {
      const { runClusterCommand } = await import('./cluster-command.js')
      return runClusterCommand(rest)
    }
    case 'firmware': {
      const { runFirmwareCommand } = await import('./firmware-command.js')
      return runFirmwareCommand(rest)
    }
    case 'hash-password': {
      const { runHashPasswordCommand } = await import('./hash-password-command.js')
      return runHashPasswordCommand(rest)
    }
    case undefined:
    case '-h':
    case '--help':
      console.log(USAGE)
      return command === undefined ? 2 : 0
    default:
      console.error(`fleetgate: unknown command ${command}\n${USAGE}`)
      return 2
  }
}

if (!satisfies(process.versions.node, REQUIRED_NODE)) {
  console.error(`fleetgate: Node.js ${REQUIRED_NODE} is needed (Node 24 LTS is the reference); this is ${process.version}. See the README, "Node 24".`)
  process.exit(1)
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a long-running command that exits on its own (signals).
    if (code >= 0) process.exit(code)
  },
  (err) => {
    if (err instanceof ConfigError) {
      console.error(`fleetgate: invalid configuration: ${err.message}`)
    } else {
      console.error(`fleetgate: ${(err as Error).stack ?? err}`)
    }
    process.exit(1)
  },
)
