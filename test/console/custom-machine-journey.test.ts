import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeviceAgent, ok, RouteTable } from '@fleetgate/device-agent'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

/** A 1x1 PNG. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

/**
 * A machine that is not the reference one: built on the SDK with its own route table, it answers
 * in shapes the simulator never uses, and reports pump and valve in its heartbeat but never light.
 */
function customMachine(url: string) {
  const state = { pump: true, valve: false }
  const routes = new RouteTable()
    .get('/system/status', () => ok({ model: 'OpenPnP-lite', uptime: '3 days', temperatures: { head: 41.5 }, errors: [] }))
    .get('/tasks/current', () => ok({ job: 'J-7', progress: 0.4 }))
    .get('/hardware/position', () => ok({ position: [10, 20, 5, 90], unit: 'mm' }))
    .get('/vision/status', () => ok({ pipeline: null, models: ['fiducial', 'chip'] }))
    .get('/cameras/status', () => ok({ head: 'ok', bottom: 'unplugged' }))
    .get('/debug/status', () => ok({ port: 'COM3', baud: 250000 }))
    .get('/debug/serial-log', () => ok({ lines: ['> M114', '< ok'] }))
    .post('/debug/send', () => ok({ sent: 'M114', response: 'ok' }))
    .get('/orders', () => ok({ orders: [{ ref: 'A1', parts: 3 }] }))
    // Camera up: a frame taken a minute ago; camera down: no frame at all.
    .get('/cameras/up/frame', () => ok({ content_type: 'image/png', encoding: 'base64', data: PIXEL, width: 1, height: 1, captured_at: Date.now() / 1000 - 60 }))
    .get('/cameras/down/frame', () => ok({ status: 'disconnected' }))
    .post('/hardware/pump', ({ body }) => {
      state.pump = (body as { state: boolean }).state
      return ok({ state: state.pump, note: state.pump ? 'vacuum on' : 'vacuum released' })
    })
    // An answer that does not say the state: the switch waits for the heartbeat.
    .post('/hardware/valve', ({ body }) => {
      state.valve = (body as { state: boolean }).state
      return ok('done')
    })
  const agent = new DeviceAgent({
    url,
    deviceId: 'custom-01',
    key: 'custom-01-key-0123456789abcdef',
    hostname: 'custom-01',
    version: 'lite-0.9',
    routes,
    status: () => ({ mode: 'auto', pump: state.pump, valve: state.valve }),
    heartbeatSeconds: 1,
  })
  return { agent, state }
}

describe.skipIf(!chromiumAvailable())('console: a machine that answers its own way', () => {
  let server: ConsoleServer
  let machine: ReturnType<typeof customMachine>
  let browser: Browser
  let context: BrowserContext
  let page: Page
  beforeAll(async () => {
    server = await startConsoleServer({ machines: 0 })
    machine = customMachine(server.url)
    const registered = new Promise((resolve) => machine.agent.once('registered', resolve))
    machine.agent.start()
    await registered
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.goto('/machines/custom-01')
    await page.getByRole('heading', { name: 'custom-01', exact: true }).waitFor()
  })
  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await machine?.agent.close()
    await server?.close()
  })

  const region = (name: string) => page.getByRole('region', { name, exact: true })
  const described = (name: string) =>
    page.getByRole('switch', { name, exact: true }).evaluate((el) => el.ownerDocument.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent)

  it('shows every overview region as the machine answered: strings as text, anything else as JSON', async () => {
    await expect.poll(() => region('System').textContent()).toContain('OpenPnP-lite')
    expect(await region('System').textContent()).toContain('3 days')
    expect(await region('System').textContent()).toContain('"head": 41.5')
    expect(await region('Task').textContent()).toMatch(/job\s*J-7/)
    expect(await region('Task').textContent()).toMatch(/progress\s*0\.4/)
    expect(await region('Hardware').textContent()).toMatch(/position\s*\[\s*10,\s*20,\s*5,\s*90\s*\]/)
    expect(await region('Vision').textContent()).toMatch(/pipeline\s*null/)
    expect(await region('Vision').getByRole('listitem').allTextContents()).toEqual(['fiducial', 'chip'])
    expect(await region('Cameras').textContent()).toContain('unplugged')
    expect(await region('Debug').textContent()).toContain('COM3')
    // Position, the task panel and the orders list read shapes they do not know as they came.
    await expect.poll(() => region('Position').textContent()).toMatch(/unit\s*mm/)
    await expect.poll(() => region('Orders').textContent()).toContain('"ref": "A1"')
    expect(await region('Orders').textContent()).toContain('"job": "J-7"')
    expect(await page.locator('main').textContent()).not.toMatch(/undefined|\[object Object\]|NaN/)
    expect(describeViolations(await seriousViolations(page))).toBe('')
  })

  it('shows its serial log as lines and its answer to a command as it came', async () => {
    const log = page.getByRole('list', { name: 'Serial log', exact: true })
    await expect.poll(() => log.getByRole('listitem').allTextContents()).toEqual(['> M114', '< ok'])
    await page.getByRole('textbox', { name: 'Command', exact: true }).fill('M114')
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    const answer = page.getByRole('status', { name: 'Answer', exact: true })
    await expect.poll(() => answer.textContent()).toMatch(/sent\s*M114\s*response\s*ok/)
    expect(await region('Debug').textContent()).not.toMatch(/undefined|→\s*$|←\s*$/m)
  })

  it('shows a switch the machine never reported as Unknown, and the others as it says', async () => {
    const light = page.getByRole('switch', { name: 'Light', exact: true })
    expect(await light.getAttribute('aria-checked')).toBe('false')
    expect(await light.isDisabled()).toBe(true)
    expect(await described('Light')).toBe('Unknown')

    const pump = page.getByRole('switch', { name: 'Pump', exact: true })
    await expect.poll(() => pump.getAttribute('aria-checked')).toBe('true')
    await pump.click()
    // The answer says {state: false}: shown at once.
    await expect.poll(() => pump.getAttribute('aria-checked')).toBe('false')
    expect(machine.state.pump).toBe(false)

    const valve = page.getByRole('switch', { name: 'Valve', exact: true })
    expect(await valve.getAttribute('aria-checked')).toBe('false')
    await valve.click()
    // The answer ("done") does not say the state: the next heartbeat does.
    await expect.poll(() => valve.getAttribute('aria-checked'), { timeout: 10_000 }).toBe('true')
    expect(machine.state.valve).toBe(true)
  })

  it('marks an old camera frame stale, and shows a frame of another shape as it came', async () => {
    await page.getByRole('img', { name: 'Camera up', exact: true }).waitFor()
    await expect.poll(() => region('Cameras').textContent()).toMatch(/Stale: taken 6\d s ago/)
    await expect.poll(() => region('Cameras').textContent()).toContain('"status": "disconnected"')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machine-custom-en')
  })

  it('says the same in Chinese', async () => {
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    const light = page.getByRole('switch', { name: '灯光', exact: true })
    await light.waitFor()
    expect(await described('灯光')).toBe('未知')
    await expect.poll(() => page.getByRole('region', { name: '相机', exact: true }).textContent()).toMatch(/画面已过时：6\d 秒前拍摄/)
    expect(await page.title()).toBe('custom-01 · 机器 · fleetgate')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machine-custom-zh')
  })
})
