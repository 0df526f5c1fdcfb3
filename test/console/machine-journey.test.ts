import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

const PLACEMENT_FILE = path.resolve('test/sim/fixtures/jlcpcb-cpl-mm.csv')

describe.skipIf(!chromiumAvailable())('console: operating one machine', () => {
  let server: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  beforeAll(async () => {
    // Slow placement so the journey can pause a running task.
    server = await startConsoleServer({ machines: 2, sim: { machine: { placeMsPerItem: 1500 } } })
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.getByRole('link', { name: 'pnp-01', exact: true }).click()
    await page.getByRole('heading', { name: 'pnp-01', exact: true }).waitFor()
  })
  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await server?.close()
  })

  const region = (name: string) => page.getByRole('region', { name, exact: true })

  it('shows the overview regions fed by the machine, and passes axe', async () => {
    for (const name of ['System', 'Task', 'Hardware', 'Vision', 'Cameras', 'Debug']) {
      await region(name).waitFor()
    }
    await expect.poll(() => region('System').textContent()).toContain('2.3.1-sim')
    expect(await region('System').getByRole('alert').count()).toBe(0)
    await page.getByRole('img', { name: 'Camera down', exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machine-en')
  })

  it('jogs with the keyboard alone: Step 10 then X+ moves X by 10 mm', async () => {
    const position = region('Position')
    const readX = async () => Number(/X\s*(-?[\d.]+) mm/.exec((await position.textContent()) ?? '')?.[1])
    await expect.poll(readX).not.toBeNaN()
    const before = await readX()
    await page.getByLabel('Step', { exact: true }).focus()
    await page.getByLabel('Step', { exact: true }).selectOption('10')
    // From the Step select, Tab reaches the jog pad: X+ first.
    await page.keyboard.press('Tab')
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('X+')
    await page.keyboard.press('Enter')
    await expect.poll(readX, { timeout: 10_000 }).toBeCloseTo(before + 10, 1)
    await page.keyboard.press('Tab') // X-
    await page.keyboard.press('Space')
    await expect.poll(readX, { timeout: 10_000 }).toBeCloseTo(before, 1)
  })

  it('turns the pump, valve and light on and off as switches', async () => {
    for (const name of ['Pump', 'Valve', 'Light']) {
      const sw = page.getByRole('switch', { name, exact: true })
      expect(await sw.getAttribute('aria-checked')).toBe('false')
      await sw.click()
      await expect.poll(() => sw.getAttribute('aria-checked')).toBe('true')
    }
    expect(server.sim.machines[0]!.machine.hardware.pump).toBe(true)
    await page.getByRole('switch', { name: 'Pump', exact: true }).click()
    await expect.poll(() => server.sim.machines[0]!.machine.hardware.pump).toBe(false)
  })

  it('turns a placement file into an order and runs it as a task with live progress', async () => {
    await page.getByLabel('Placement file', { exact: true }).setInputFiles(PLACEMENT_FILE)
    const parsed = page.getByRole('table', { name: 'Parsed components', exact: true })
    await expect.poll(() => parsed.getByRole('row').count()).toBe(6)
    expect(await parsed.getByRole('row').nth(1).textContent()).toContain('C1')
    await page.getByRole('button', { name: 'Create order', exact: true }).click()
    const orders = page.getByRole('table', { name: 'Orders', exact: true })
    await expect.poll(() => orders.getByRole('row').count()).toBe(2)
    await orders.getByRole('button', { name: 'Start task', exact: true }).click()
    const progress = page.getByRole('progressbar', { name: 'Task progress', exact: true })
    await expect.poll(() => progress.getAttribute('aria-valuemax')).toBe('5')
    await expect.poll(() => region('Orders').textContent()).toContain('running')
    await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow')), { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
    await screenshot(page, 'machine-task-running')
    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await expect.poll(() => region('Orders').textContent()).toContain('State: paused')
    await page.getByRole('button', { name: 'Resume', exact: true }).click()
    await expect.poll(() => region('Orders').textContent()).toContain('State: running')
    await page.getByRole('button', { name: 'Stop', exact: true }).click()
    await expect.poll(() => region('Orders').textContent()).toContain('State: stopped')
    expect(describeViolations(await seriousViolations(page))).toBe('')
  })

  it('shows both camera frames', async () => {
    for (const name of ['Camera up', 'Camera down']) {
      const img = page.getByRole('img', { name, exact: true })
      await img.waitFor()
      await expect.poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0)
    }
  })

  it('sends a debug command and shows the answer and the serial log', async () => {
    await page.getByRole('textbox', { name: 'Command', exact: true }).fill('$I')
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await expect.poll(() => region('Debug').textContent()).toContain('VER:')
    const log = page.getByRole('list', { name: 'Serial log', exact: true })
    await expect.poll(() => log.textContent()).toContain('$I')
  })

  it('shows each failed piece in an alert inside its region when the machine is offline', async () => {
    await server.sim.machines[1]!.agent.close()
    await page.goto('/machines/pnp-02')
    await page.getByRole('heading', { name: 'pnp-02', exact: true }).waitFor()
    for (const name of ['System', 'Task', 'Hardware', 'Vision', 'Cameras', 'Debug']) {
      await region(name).getByRole('alert').waitFor()
    }
    expect(await region('System').getByRole('alert').textContent()).toMatch(/\S/)
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machine-offline')
  })
})
