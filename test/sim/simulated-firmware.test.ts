import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startSimulation, type Simulation, type SimulationOptions } from '../../src/sim/simulation.js'
import { FakeGateway } from '../sdk/fake-gateway.js'
import { ImageServer, imageBytes, offerFor } from '../sdk/image-server.js'
import { statusesUntil } from '../sdk/status-frames.js'


describe('simulated machines take firmware offers (contract §14)', () => {
  const image = imageBytes(64_000)
  const offer = offerFor(image)
  let images: ImageServer
  let gateway: FakeGateway
  let simulation: Simulation | undefined

  beforeEach(async () => {
    images = new ImageServer(image)
    gateway = await FakeGateway.start({ http: images.handle })
  })
  afterEach(async () => {
    await simulation?.stop()
    simulation = undefined
    await gateway.close()
  })

  /** One machine, linked, its first heartbeat in hand. */
  const simulate = async (options: Partial<SimulationOptions> = {}) => {
    simulation = await startSimulation({ url: gateway.url, devices: 1, keysFile: null, firmwareInstallMs: 0, ...options })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    const heartbeat = await link.nextFrame<{ type: 'heartbeat'; status: Record<string, unknown> }>('heartbeat')
    return { link, status: heartbeat.status, machine: simulation.machines[0]!.machine }
  }

  it('answers busy while its task is running or paused, and installs once the task is stopped', async () => {
    const { link, machine } = await simulate({ machine: { placeMsPerItem: 60_000 } })
    const order = machine.orders.create('board', [{ component: 'R1', x: 10, y: 10, angle: 0 }], {})
    machine.tasks.start(order.id)
    link.send(offer)
    expect(await link.nextFrame('firmware-status')).toMatchObject({ rollout_id: 'ro-1', state: 'busy' })
    machine.tasks.pause()
    link.send(offer)
    expect(await link.nextFrame('firmware-status')).toMatchObject({ rollout_id: 'ro-1', state: 'busy' })
    expect(images.requests).toEqual([])

    machine.tasks.stop()
    link.send(offer)
    expect((await statusesUntil(link, 'installing', 'failed')).map((s) => s.state)).toContain('downloading')
    expect(images.requests).toHaveLength(1)
  })

  it('installs, re-links reporting the new controller version in its heartbeat, then reports installed', async () => {
    const { link, status } = await simulate()
    expect(status).toMatchObject({ firmware: '1.0.0', firmware_release: null, firmware_version: '2.3.1-sim', pump: false })

    link.send(offer)
    const before = await statusesUntil(link, 'installing')
    expect(before[0]).toMatchObject({ state: 'downloading', progress: 0 })
    expect(await link.closed).toEqual({ code: 1000, reason: 'relinking' })
    expect(link.received.some((f) => f.type === 'firmware-status' && f.state === 'failed')).toBe(false)

    const relinked = await gateway.nextLink()
    await relinked.acceptRegistration()
    const heartbeat = await relinked.nextFrame<{ type: 'heartbeat'; status: Record<string, unknown> }>('heartbeat')
    expect(heartbeat.status).toMatchObject({
      firmware: '2.4.0+42',
      firmware_release: { release_id: 'rel-2', image_version: 42, display_version: '2.4.0+42', sha256: offer.sha256 },
      firmware_version: '2.3.1-sim',
    })
    expect(await relinked.nextFrame('firmware-status')).toEqual({ type: 'firmware-status', rollout_id: 'ro-1', release_id: 'rel-2', state: 'installed' })

    // Offered again, the release it now runs is installed at once.
    relinked.send(offerFor(image, { rollout_id: 'ro-2' }))
    expect(await relinked.nextFrame('firmware-status')).toMatchObject({ rollout_id: 'ro-2', state: 'installed' })
    expect(images.requests).toHaveLength(1)
  })

  it('takes firmwareInstallMs to install', async () => {
    const { link } = await simulate({ firmwareInstallMs: 300 })
    link.send(offer)
    expect((await statusesUntil(link, 'installing')).at(-1)).toMatchObject({ progress: 0 })
    const started = Date.now()
    expect(await link.nextFrame('firmware-status')).toMatchObject({ state: 'installing', progress: 100 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
  })

  it('with failFirmware, reports failed after the download and keeps its version and link', async () => {
    simulation = await startSimulation({ url: gateway.url, devices: 2, keysFile: null, firmwareInstallMs: 0, failFirmware: ['pnp-02'] })
    const links = await Promise.all([gateway.nextLink(), gateway.nextLink()])
    const registers = await Promise.all(links.map((l) => l.acceptRegistration()))
    const failing = links[registers.findIndex((r) => r.device_id === 'pnp-02')]!
    await failing.nextFrame('heartbeat')
    failing.send(offer)
    const statuses = await statusesUntil(failing, 'installed', 'failed')
    expect(statuses.map((s) => s.state)).toContain('downloading')
    expect(statuses.at(-1)).toEqual({ type: 'firmware-status', rollout_id: 'ro-1', release_id: 'rel-2', state: 'failed', error: 'verification failed on the machine (simulated)' })
    expect(simulation.machines[1]!.machine.status()).toMatchObject({ firmware: '1.0.0', firmware_release: null })
    expect(simulation.machines[1]!.agent.state).toBe('registered')
  })

  it('refuses failFirmware ids that are not simulated machines', async () => {
    await expect(startSimulation({ url: gateway.url, devices: 2, keysFile: null, failFirmware: ['pnp-03'] })).rejects.toThrow(/pnp-03/)
  })
})
