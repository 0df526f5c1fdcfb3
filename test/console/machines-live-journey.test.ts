import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

describe.skipIf(!chromiumAvailable())('console: the machines list stays live', () => {
  let server: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  beforeAll(async () => {
    server = await startConsoleServer({ machines: 3 })
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
  })
  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await server?.close()
  })

  const statusOf = (id: string) =>
    page
      .getByRole('table', { name: 'Machines', exact: true })
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: id, exact: true }) })
      .getByRole('cell')
      .nth(1)
      .textContent()

  it('reads Offline within 5 s of a link closing, without a reload', async () => {
    await signIn(page, 'root', 'root-password')
    await expect.poll(() => statusOf('pnp-03')).toBe('Online')
    const navigations: string[] = []
    page.on('framenavigated', (frame) => navigations.push(frame.url()))
    await server.sim.machines[2]!.agent.close()
    await expect.poll(() => statusOf('pnp-03'), { timeout: 5_000, interval: 100 }).toBe('Offline')
    expect(await statusOf('pnp-01')).toBe('Online')
    expect(navigations).toEqual([])
    await screenshot(page, 'machines-live-offline')
  })

  it('binds a machine for a user through the dialog, and lists it', async () => {
    const userContext = await newContext(browser, server.url)
    const user = await userContext.newPage()
    await signIn(user, 'alice', 'alice-password')
    const table = user.getByRole('table', { name: 'Machines', exact: true })
    await table.waitFor()
    expect(await table.getByRole('link', { name: 'pnp-01', exact: true }).count()).toBe(0)
    await user.getByRole('button', { name: 'Bind a machine', exact: true }).click()
    const dialog = user.getByRole('dialog', { name: 'Bind a machine', exact: true })
    await dialog.getByRole('textbox', { name: 'Machine', exact: true }).fill('pnp-01')
    await dialog.getByRole('textbox', { name: 'Username', exact: true }).fill('operator')
    await dialog.getByLabel('Password', { exact: true }).fill('wrong')
    await dialog.getByRole('button', { name: 'Bind', exact: true }).click()
    await dialog.getByRole('alert').waitFor()
    expect(describeViolations(await seriousViolations(user))).toBe('')
    await screenshot(user, 'bind-dialog-refused')
    await dialog.getByLabel('Password', { exact: true }).fill('operator')
    await dialog.getByRole('button', { name: 'Bind', exact: true }).click()
    await table.getByRole('link', { name: 'pnp-01', exact: true }).waitFor()
    expect(await user.getByRole('dialog').count()).toBe(0)
    expect(await table.getByRole('link', { name: 'pnp-02', exact: true }).count()).toBe(0)
    await userContext.close()
  })

  it('pages a large fleet forward and back with the API cursor, 100 rows a page', async () => {
    const now = Date.now() / 1000
    const rows = Array.from({ length: 250 }, (_, i) => ({
      device_id: `z-${String(i).padStart(4, '0')}`, hostname: 'z', ip: '10.0.0.1', version: '1.0.0', last_status: '{}', created_at: now,
    }))
    await server.test.storage.db.insertInto('devices').values(rows).execute()
    await page.goto('/machines')
    const table = page.getByRole('table', { name: 'Machines', exact: true })
    await table.getByRole('link', { name: 'z-0000', exact: true }).waitFor()
    expect(await table.getByRole('row').count()).toBe(101)
    await page.getByRole('button', { name: 'Next page', exact: true }).click()
    await table.getByRole('link', { name: 'z-0097', exact: true }).waitFor()
    expect(await table.getByRole('link', { name: 'z-0000', exact: true }).count()).toBe(0)
    await page.getByRole('button', { name: 'Next page', exact: true }).click()
    await table.getByRole('link', { name: 'z-0249', exact: true }).waitFor()
    expect(await page.getByRole('button', { name: 'Next page', exact: true }).isDisabled()).toBe(true)
    await page.getByRole('button', { name: 'Previous page', exact: true }).click()
    await expect.poll(() => table.getByRole('link', { name: 'z-0097', exact: true }).count()).toBe(1)
    expect(await table.getByRole('link', { name: 'z-0249', exact: true }).count()).toBe(0)
  })
})
