import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { requireNode20 } from '../helpers/node20.js'
import { FakeGateway } from './fake-gateway.js'

const NODE20 = requireNode20('the Node 20 run of production reporting')
const AGENT = pathToFileURL(path.resolve('packages/device-agent/dist/index.js')).href

/** A machine's program on Node 20: reports production, and says when the gateway acknowledged it. */
const MACHINE = `
import { DeviceAgent, RouteTable } from ${JSON.stringify(AGENT)}
const agent = new DeviceAgent({ url: process.argv[1], deviceId: 'pnp-20', key: 'node20-device-key-0123', version: '1', routes: new RouteTable(), ratedCph: 4000 })
try { agent.production.report({ kind: 'state', state: 'on fire' }) } catch (err) { console.log('refused: ' + err.message) }
const ids = [agent.production.report({ kind: 'state', state: 'productive' }), agent.production.report({ kind: 'placements', placed: 12, missed: 1, feeders: [{ feeder: 'F3', placed: 12, missed: 1 }] })]
console.log('ids: ' + ids.join(' '))
agent.production.on('acknowledged', (acked) => {
  console.log('acknowledged: ' + acked.join(' ') + '; queued ' + agent.production.queued)
  void agent.close()
})
agent.start()
`

describe('production reporting on Node 20 (contract §17)', () => {
  let gateway: FakeGateway | undefined
  afterEach(async () => {
    await gateway?.close()
  })

  it.runIf(NODE20)('reports, batches and is acknowledged from the built package on Node 20', { timeout: 30_000 }, async () => {
    gateway = await FakeGateway.start()
    const child = spawn(NODE20!, ['--input-type=module', '-e', MACHINE, gateway.url], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const link = await gateway.nextLink()
    expect(await link.acceptRegistration()).toMatchObject({ device_id: 'pnp-20', rated_cph: 4000 })
    const frame = await link.nextFrame<{ type: string; events: { id: string; kind: string }[] }>('production')
    expect(frame.events.map((e) => e.kind)).toEqual(['state', 'placements', 'state'])
    link.send({ type: 'production-ack', ids: frame.events.map((e) => e.id), rejected: [] })
    const [code] = await once(child, 'exit')
    expect(out).toMatch(/refused: invalid production event: state event: state/)
    const ids = /ids: (\S+) (\S+)/.exec(out)!.slice(1)
    expect(out).toContain(`acknowledged: ${ids[0]} ${ids[1]} ${frame.events[2]!.id}; queued 0`)
    expect(code).toBe(0)
  })
})
