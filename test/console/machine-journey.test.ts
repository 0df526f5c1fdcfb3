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
    // Slow placement so the journey can pause a running task; a heartbeat a second so switches follow the machine quickly.
    server = await startConsoleServer({ machines: 2, sim: { heartbeatSeconds: 1, machine: { placeMsPerItem: 1500 } } })
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
  const machine = () => server.sim.machines[0]!.machine
  /** Answers the open dialog `name` with Confirm, and waits for it to close. */
  const confirm = async (name: string) => {
    const dialog = page.getByRole('dialog', { name, exact: true })
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).click()
    await expect.poll(() => dialog.count()).toBe(0)
  }
  /** Another operator, over the API. */
  const asOperator = async (method: string, devicePath: string, body?: unknown) => {
    const login = await fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'root', password: 'root-password' }) })
    const { token } = (await login.json()) as { token: string }
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    return fetch(`${server.url}/api/v1/devices/pnp-01${devicePath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  }

  it('shows the overview regions fed by the machine under its own title, and passes axe', async () => {
    for (const name of ['System', 'Task', 'Hardware', 'Vision', 'Cameras', 'Debug']) {
      await region(name).waitFor()
    }
    await expect.poll(() => region('System').textContent()).toContain('2.3.1-sim')
    expect(await region('System').getByRole('alert').count()).toBe(0)
    expect(await page.title()).toBe('pnp-01 · Machines · fleetgate')
    await page.getByRole('img', { name: 'Camera down', exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page))).toBe('')
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

  it('turns the pump, valve and light on and off as switches showing what the machine reports', async () => {
    const describedBy = (name: string) =>
      page.getByRole('switch', { name, exact: true }).evaluate((el) => el.ownerDocument.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent)
    for (const name of ['Pump', 'Valve', 'Light']) {
      const sw = page.getByRole('switch', { name, exact: true })
      // The simulator reports all three in its heartbeat: known, off, and enabled.
      await expect.poll(() => describedBy(name)).toBe('Off')
      expect(await sw.getAttribute('aria-checked')).toBe('false')
      await sw.click()
      await expect.poll(() => sw.getAttribute('aria-checked'), { timeout: 5_000 }).toBe('true')
      expect(await describedBy(name)).toBe('On')
    }
    expect(machine().hardware).toMatchObject({ pump: true, valve: true, light: { state: true } })
    const pump = page.getByRole('switch', { name: 'Pump', exact: true })
    // Another operator turns the pump off: the switch follows the machine's next heartbeat.
    expect((await asOperator('POST', '/hardware/pump', { state: false })).status).toBe(200)
    await expect.poll(() => pump.getAttribute('aria-checked'), { timeout: 10_000 }).toBe('false')
    // The machine switches it on by itself (a pick does): it shows on.
    machine().hardware.pump = true
    await expect.poll(() => pump.getAttribute('aria-checked'), { timeout: 10_000 }).toBe('true')
    await pump.click()
    await expect.poll(() => machine().hardware.pump).toBe(false)
    await expect.poll(() => pump.getAttribute('aria-checked'), { timeout: 5_000 }).toBe('false')
  })

  it('turns a placement file into one order however fast the click, and runs it as a task after Confirm', async () => {
    await page.getByLabel('Placement file', { exact: true }).setInputFiles(PLACEMENT_FILE)
    const parsed = page.getByRole('table', { name: 'Parsed components', exact: true })
    await expect.poll(() => parsed.getByRole('row').count()).toBe(6)
    expect(await parsed.getByRole('row').nth(1).textContent()).toContain('C1')
    await page.getByRole('button', { name: 'Create order', exact: true }).dblclick()
    const orders = page.getByRole('table', { name: 'Orders', exact: true })
    await expect.poll(() => orders.getByRole('row').count()).toBe(2)
    await page.waitForTimeout(1000)
    expect(await orders.getByRole('row').count()).toBe(2)
    expect(((await (await asOperator('GET', '/orders')).json()) as { orders: unknown[] }).orders).toHaveLength(1)

    // Start task asks first; Cancel starts nothing.
    await orders.getByRole('button', { name: 'Start task', exact: true }).click()
    const ask = page.getByRole('dialog', { name: 'Start task', exact: true })
    expect(await ask.textContent()).toContain('pnp-01')
    await ask.getByRole('button', { name: 'Cancel', exact: true }).click()
    expect(machine().tasks.current()).toBeNull()
    await orders.getByRole('button', { name: 'Start task', exact: true }).click()
    await confirm('Start task')

    const progress = page.getByRole('progressbar', { name: 'Task progress', exact: true })
    await expect.poll(() => progress.getAttribute('aria-valuemax')).toBe('5')
    await expect.poll(() => region('Orders').textContent()).toContain('running')
    // The overview follows too, though heartbeat events arrive every second.
    await expect.poll(() => region('Task').textContent(), { timeout: 10_000 }).toMatch(/state\s*running/)
    await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow')), { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
    await expect.poll(() => region('Orders').textContent()).toMatch(/Elapsed 0:0[1-9]/)
    const board = page.getByRole('img', { name: 'Board image', exact: true })
    await expect.poll(() => board.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0)
    await screenshot(page, 'machine-task-running')
    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await expect.poll(() => region('Orders').textContent()).toContain('State: paused')
    await page.getByRole('button', { name: 'Resume', exact: true }).click()
    await expect.poll(() => region('Orders').textContent()).toContain('State: running')
    await page.getByRole('button', { name: 'Stop', exact: true }).click()
    await confirm('Stop')
    await expect.poll(() => region('Orders').textContent()).toContain('State: stopped')
    expect(describeViolations(await seriousViolations(page))).toBe('')
  })

  it('deletes an order after Confirm', async () => {
    const orders = page.getByRole('table', { name: 'Orders', exact: true })
    await orders.getByRole('button', { name: 'Delete', exact: true }).click()
    expect(await page.getByRole('dialog', { name: 'Delete', exact: true }).textContent()).toMatch(/ord-0001/)
    await confirm('Delete')
    await expect.poll(() => orders.getByRole('row').count()).toBe(1)
    expect(machine().orders.list()).toEqual([])
  })

  it('shows both camera frames, fresh', async () => {
    for (const name of ['Camera up', 'Camera down']) {
      const img = page.getByRole('img', { name, exact: true })
      await img.waitFor()
      await expect.poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0)
    }
    expect(await region('Cameras').textContent()).not.toContain('Stale')
  })

  it('sends debug commands, recalls them with the arrow keys and keeps the serial log on its newest line', async () => {
    const command = page.getByRole('textbox', { name: 'Command', exact: true })
    await command.fill('$I')
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await expect.poll(() => region('Debug').textContent()).toContain('VER:')
    const log = page.getByRole('list', { name: 'Serial log', exact: true })
    await expect.poll(() => log.textContent()).toContain('$I')
    for (const line of ['?', 'M114', 'G0 X1', 'G0 X2', 'G0 X3', 'G0 X4', 'G28']) {
      await command.fill(line)
      await command.press('Enter')
      await expect.poll(() => log.getByRole('listitem').last().textContent()).toBe('← ok')
    }
    // The newest line is in view: the list is scrolled to its end.
    await expect.poll(() => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(2)
    expect(await log.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true)
    await command.fill('G0 X')
    await command.press('ArrowUp')
    expect(await command.inputValue()).toBe('G28')
    await command.press('ArrowUp')
    expect(await command.inputValue()).toBe('G0 X4')
    await command.press('ArrowDown')
    await command.press('ArrowDown')
    expect(await command.inputValue()).toBe('G0 X')
  })

  it('looks like this in English and in Chinese, and passes axe in both', async () => {
    // A task under way for the pictures.
    await page.getByRole('button', { name: 'Create order', exact: true }).click()
    const orders = page.getByRole('table', { name: 'Orders', exact: true })
    await expect.poll(() => orders.getByRole('row').count()).toBe(2)
    await orders.getByRole('button', { name: 'Start task', exact: true }).click()
    await confirm('Start task')
    const progress = page.getByRole('progressbar', { name: 'Task progress', exact: true })
    await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow')), { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    await page.getByRole('switch', { name: 'Light', exact: true }).click()
    await expect.poll(() => page.getByRole('switch', { name: 'Light', exact: true }).getAttribute('aria-checked')).toBe('false')
    await screenshot(page, 'machine-en')

    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    for (const name of ['系统', '任务', '硬件', '视觉', '相机', '调试', '位置', '订单']) await page.getByRole('region', { name, exact: true }).waitFor()
    for (const name of ['气泵', '阀门', '灯光']) await page.getByRole('switch', { name, exact: true }).waitFor()
    await page.getByRole('img', { name: '电路板图像', exact: true }).waitFor()
    await expect.poll(() => page.title()).toBe('pnp-01 · 机器 · fleetgate')
    await expect.poll(() => page.getByRole('region', { name: '订单', exact: true }).textContent()).toMatch(/已用时 \d/)
    await page.getByRole('button', { name: '停止', exact: true }).click()
    await page.getByRole('dialog', { name: '停止', exact: true }).getByRole('button', { name: '取消', exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await page.getByRole('dialog', { name: '停止', exact: true }).getByRole('button', { name: '取消', exact: true }).click()
    await screenshot(page, 'machine-zh')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await page.getByLabel('语言', { exact: true }).selectOption('en')
  })

  it('shows each failed piece in an alert inside its region when the machine is offline, and asks it nothing', async () => {
    await server.sim.machines[1]!.agent.close()
    const asked: string[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      // The overview and the production figures (§16: what the gateway stored, not asked of the machine) are read from the server.
      const fromServer = url.pathname === '/api/v1/devices/pnp-02/overview' || url.pathname.startsWith('/api/v1/devices/pnp-02/production')
      if (url.pathname.startsWith('/api/v1/devices/pnp-02/') && !fromServer) asked.push(url.pathname)
    })
    await page.goto('/machines/pnp-02')
    await page.getByRole('heading', { name: 'pnp-02', exact: true }).waitFor()
    for (const name of ['System', 'Task', 'Hardware', 'Vision', 'Cameras', 'Debug']) {
      await region(name).getByRole('alert').waitFor()
    }
    expect(await region('System').getByRole('alert').textContent()).toMatch(/\S/)
    for (const name of ['Pump', 'Valve', 'Light']) expect(await page.getByRole('switch', { name, exact: true }).isDisabled()).toBe(true)
    await page.waitForTimeout(3000)
    expect(asked).toEqual([])
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machine-offline')
  })
})
