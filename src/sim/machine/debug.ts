import { Type } from '@sinclair/typebox'
import { ok, type RouteTable } from '@fleetgate/device-agent'
import type { PickAndPlaceMachine } from './machine.js'
import { parseBody, queryValue } from './validate-body.js'

const SERIAL_PORTS = [
  { name: '/dev/ttyUSB0', description: 'Motion controller (GRBL, 115200 baud)' },
  { name: '/dev/ttyUSB1', description: 'Feeder controller (RS-485)' },
  { name: '/dev/ttyACM0', description: 'Vacuum, valve and ring light board' },
]

const SendBody = Type.Object({ command: Type.String({ minLength: 1, maxLength: 256 }), params: Type.Optional(Type.String({ maxLength: 1024 })) })

export function registerDebugRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { serial } = machine

  routes.get('/debug/ports', () => ok({ ports: SERIAL_PORTS }))

  routes.get('/debug/status', () =>
    ok({
      connected: true,
      port: SERIAL_PORTS[0]!.name,
      baud_rate: 115200,
      controller: 'grbl',
      tx_lines: serial.txCount,
      rx_lines: serial.rxCount,
      errors: serial.errorCount,
      last_command: serial.lastCommand,
    }),
  )

  routes.get('/debug/serial-log', ({ query }) => {
    const limit = Math.min(200, Math.max(1, Number(queryValue(query, 'limit') ?? 100) || 100))
    return ok({ port: SERIAL_PORTS[0]!.name, lines: serial.tail(limit) })
  })

  routes.post('/debug/send', ({ body }) => {
    const { command, params } = parseBody(SendBody, body)
    const line = params ? `${command} ${params}` : command
    const { response, ok: accepted } = serial.send(line)
    return ok({ command: line, response, ok: accepted })
  })
}
