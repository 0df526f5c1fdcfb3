import type { Browser, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

const isPath = (pathname: string) => (url: URL) => url.pathname === pathname

describe.skipIf(!chromiumAvailable())('console: rules every page keeps', () => {
  let server: ConsoleServer
  let browser: Browser
  beforeAll(async () => {
    server = await startConsoleServer({ machines: 1, sim: { machine: { placeMsPerItem: 60_000 } } })
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const apiToken = async (username = 'root', password = 'root-password') => {
    const login = await fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
    return ((await login.json()) as { token: string }).token
  }

  it('gives each page its own title, in English and in Chinese', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await page.goto('/login')
    await expect.poll(() => page.title()).toBe('Sign in · fleetgate')
    await signIn(page, 'root', 'root-password')
    const titles: [string, string][] = [
      ['/machines', 'Machines · fleetgate'],
      ['/machines/pnp-01', 'pnp-01 · Machines · fleetgate'],
      ['/production', 'Production · fleetgate'],
      ['/firmware', 'Firmware · fleetgate'],
      ['/audit', 'Audit log · fleetgate'],
      ['/platform/devices', 'Devices · Platform · fleetgate'],
      ['/nowhere', 'Page not found · fleetgate'],
    ]
    for (const [path, title] of titles) {
      await page.goto(path)
      await expect.poll(() => page.title(), { message: path }).toBe(title)
    }
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    await page.getByRole('link', { name: '机器', exact: true }).click()
    await expect.poll(() => page.title()).toBe('机器 · fleetgate')
    await page.getByRole('link', { name: 'pnp-01', exact: true }).click()
    await expect.poll(() => page.title()).toBe('pnp-01 · 机器 · fleetgate')
    await context.close()
  })

  it('shows a lazy chunk gone after a deploy as a translated error with Reload, inside the shell', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    // A deploy removed the old hashed chunk: the server no longer has it.
    const gone = (route: Route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{"success":false,"error":"not_found"}' })
    await page.route('**/assets/machine-page-*.js', gone)
    await page.getByRole('link', { name: 'pnp-01', exact: true }).click()
    const alert = page.getByRole('alert')
    await expect.poll(() => alert.textContent()).toContain('the console was probably updated')
    await page.getByRole('button', { name: 'Reload', exact: true }).waitFor()
    // The shell is still there to go elsewhere.
    await page.getByRole('link', { name: 'Machines', exact: true }).waitFor()
    expect(await page.title()).toBe('pnp-01 · Machines · fleetgate')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'page-load-failed-en')
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    await expect.poll(() => alert.textContent()).toContain('控制台可能在您打开后已更新')
    await page.getByRole('button', { name: '重新加载', exact: true }).waitFor()
    await screenshot(page, 'page-load-failed-zh')
    // Once the chunk can be fetched (the new deploy's page), Reload brings the page.
    await page.unroute('**/assets/machine-page-*.js', gone)
    await page.getByRole('button', { name: '重新加载', exact: true }).click()
    await page.getByRole('heading', { name: 'pnp-01', exact: true }).waitFor()
    await page.getByRole('region', { name: '系统', exact: true }).waitFor()
    await context.close()
  })

  it('shows a chunk that cannot be fetched at all (network error) the same way', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.route('**/assets/firmware-page-*.js', (route) => route.abort())
    await page.getByRole('link', { name: 'Firmware', exact: true }).click()
    await page.getByRole('button', { name: 'Reload', exact: true }).waitFor()
    expect(await page.getByRole('alert').textContent()).toMatch(/could not be loaded/)
    await context.close()
  })

  it('shows times in the browser’s locale and time zone', async () => {
    const token = await apiToken()
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const device = `${server.url}/api/v1/devices/pnp-01`
    const order = (await (await fetch(`${device}/orders`, { method: 'POST', headers, body: JSON.stringify({ name: 'tz', items: [{ component: 'R1', x: 1, y: 1, angle: 0 }] }) })).json()) as { order: { id: string } }
    const started = (await (await fetch(`${device}/tasks/start`, { method: 'POST', headers, body: JSON.stringify({ order_id: order.order.id }) })).json()) as { data: { task: { started_at: number } } }
    const startedMs = started.data.task.started_at * 1000

    const context = await newContext(browser, server.url, 'zh-CN', { timezoneId: 'Asia/Kolkata' })
    const page = await context.newPage()
    await page.goto('/login')
    await page.getByRole('textbox', { name: '用户名', exact: true }).fill('root')
    await page.getByLabel('密码', { exact: true }).fill('root-password')
    await page.getByRole('button', { name: '登录', exact: true }).click()
    await page.getByRole('link', { name: 'pnp-01', exact: true }).click()
    const orders = page.getByRole('region', { name: '订单', exact: true })
    await expect.poll(() => orders.textContent()).toContain('开始于')
    const shown = /开始于 (.+?) ·/.exec((await orders.textContent()) ?? '')?.[1]
    const options = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' } as const
    const [inKolkata, inUtc] = await page.evaluate(
      ([ms, opts]) => [
        new Intl.DateTimeFormat('zh-CN', { ...opts, timeZone: 'Asia/Kolkata' }).format(ms),
        new Intl.DateTimeFormat('zh-CN', { ...opts, timeZone: 'UTC' }).format(ms),
      ],
      [startedMs, options] as const,
    )
    expect(shown).toBe(inKolkata)
    expect(shown).not.toBe(inUtc)
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await fetch(`${device}/tasks/stop`, { method: 'POST', headers })
    await context.close()
  })

  it('forgets the previous user’s data when a 401 signs them out', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.getByRole('link', { name: 'pnp-01', exact: true }).click()
    const system = page.getByRole('region', { name: 'System', exact: true })
    await expect.poll(() => system.textContent()).toContain('2.3.1-sim')

    // The server stops accepting the token (it expired, the user was removed): the next refresh of the page answers 401.
    const refuse = (route: Route) => route.fulfill({ status: 401, contentType: 'application/json', body: '{"success":false,"error":"unauthorized","message":"Token expired"}' })
    await page.route(isPath('/api/v1/devices/pnp-01/overview'), refuse)
    await page.waitForURL('**/login', { timeout: 15_000 })
    await page.unroute(isPath('/api/v1/devices/pnp-01/overview'), refuse)

    // The next user, in the same tab (no reload): their answers are slow to come.
    const slow = async (route: Route) => {
      await new Promise((resolve) => setTimeout(resolve, 2000))
      await route.continue().catch(() => undefined)
    }
    await page.route(isPath('/api/v1/devices/pnp-01/overview'), slow)
    await page.route(isPath('/api/v1/devices'), slow)
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill('alice')
    await page.getByLabel('Password', { exact: true }).fill('alice-password')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    // Back where the 401 happened: nothing of root's machine while alice's answer is on its way.
    await page.getByRole('heading', { name: 'pnp-01', exact: true }).waitFor()
    for (let i = 0; i < 10; i++) {
      expect(await page.getByText('2.3.1-sim').count()).toBe(0)
      await page.waitForTimeout(100)
    }
    // Alice is not bound to pnp-01: the server says so.
    await page.getByRole('alert').waitFor({ timeout: 10_000 })
    expect(await page.getByText('2.3.1-sim').count()).toBe(0)
    await page.getByRole('link', { name: 'Machines', exact: true }).click()
    const table = page.getByRole('table', { name: 'Machines', exact: true })
    for (let i = 0; i < 10; i++) {
      expect(await page.getByRole('link', { name: 'pnp-01', exact: true }).count()).toBe(0)
      await page.waitForTimeout(100)
    }
    await table.waitFor({ timeout: 10_000 })
    expect(await table.getByRole('link', { name: 'pnp-01', exact: true }).count()).toBe(0)
    await context.close()
  })
})
