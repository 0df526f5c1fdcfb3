import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

describe.skipIf(!chromiumAvailable())('console: signing in and seeing the machines', () => {
  let server: ConsoleServer
  let browser: Browser
  beforeAll(async () => {
    server = await startConsoleServer({ machines: 2 })
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('sends a signed-out visitor to /login, and a wrong password shows the server’s message', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await page.goto('/machines')
    await page.waitForURL('**/login')
    expect(await seriousViolations(page), 'axe on /login').toEqual([])
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill('root')
    await page.getByLabel('Password', { exact: true }).fill('wrong')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid|wrong|credentials/i)
    await screenshot(page, 'login-failed')
    await context.close()
  })

  it('signs in with the keyboard alone and lists every machine as Online', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await page.goto('/login')
    // Focus starts in Username (autofocus); everything else is Tab and Enter.
    await page.getByRole('textbox', { name: 'Username', exact: true }).waitFor()
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("name")')).toBe('username')
    await page.keyboard.type('root')
    await page.keyboard.press('Tab')
    await page.keyboard.type('root-password')
    await page.keyboard.press('Enter')
    await page.waitForURL('**/machines')
    const table = page.getByRole('table', { name: 'Machines', exact: true })
    for (const id of ['pnp-01', 'pnp-02']) {
      const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: id, exact: true }) })
      await expect.poll(() => row.getByRole('cell').nth(1).textContent()).toBe('Online')
    }
    for (const name of ['Machines', 'Firmware', 'Platform', 'Audit']) await page.getByRole('link', { name, exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page)), 'axe on /machines').toBe('')
    await screenshot(page, 'machines-en')
    await context.close()
  })

  it('shows a user only Machines in the navigation, keeps Chinese after a reload, and signs out to /login', async () => {
    const context = await newContext(browser, server.url, 'zh-CN')
    const page = await context.newPage()
    await page.goto('/login')
    // A zh browser starts in Chinese.
    await page.getByRole('button', { name: '登录', exact: true }).waitFor()
    await page.getByLabel('语言', { exact: true }).selectOption('en')
    await signIn(page, 'alice', 'alice-password')
    await page.getByRole('table', { name: 'Machines', exact: true }).waitFor()
    expect(await page.getByRole('link', { name: 'Firmware', exact: true }).count()).toBe(0)
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    await page.reload()
    await expect.poll(() => page.getByRole('table', { name: '机器', exact: true }).count(), { timeout: 15_000 }).toBe(1)
    await screenshot(page, 'machines-zh')
    await page.getByRole('button', { name: '退出登录', exact: true }).click()
    await expect.poll(() => new URL(page.url()).pathname).toBe('/login')
    await context.close()
  })

  it('works in Chinese from sign-in to the machine page, and passes axe', async () => {
    const context = await newContext(browser, server.url, 'zh-CN')
    const page = await context.newPage()
    await page.goto('/login')
    await page.getByRole('button', { name: '登录', exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page)), 'axe on /login in Chinese').toBe('')
    await screenshot(page, 'login-zh')
    await page.getByRole('textbox', { name: '用户名', exact: true }).fill('root')
    await page.getByLabel('密码', { exact: true }).fill('root-password')
    await page.getByRole('button', { name: '登录', exact: true }).click()
    await page.getByRole('link', { name: 'pnp-01', exact: true }).click()
    for (const name of ['系统', '任务', '硬件', '视觉', '相机', '调试', '位置']) await page.getByRole('region', { name, exact: true }).waitFor()
    await page.getByRole('switch', { name: '气泵', exact: true }).waitFor()
    await page.getByRole('img', { name: '上相机', exact: true }).waitFor()
    expect(await page.evaluate('document.documentElement.lang')).toBe('zh-CN')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machine-zh-after-sign-in')
    await context.close()
  })
})
