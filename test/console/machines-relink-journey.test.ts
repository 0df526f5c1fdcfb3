import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fleetDeviceId, LinkFleet } from '../../bench/bench-relink.js'
import { DEVICE_LINK_PATH } from '@fleetgate/device-agent/protocol'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

/** Contract §12's rule, checked here with a smaller fleet (the bench runs the 5,000). */
const FLEET = 300
const MAX_LIST_PAGES = 50

interface Row {
  id: string
  status: string
  version: string
}

describe.skipIf(!chromiumAvailable())('console: the machines list while the whole fleet re-links', () => {
  let server: ConsoleServer
  let fleet: LinkFleet
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let token: string
  beforeAll(async () => {
    server = await startConsoleServer({ machines: 1 })
    fleet = new LinkFleet(`${server.url.replace('http', 'ws')}${DEVICE_LINK_PATH}`, 'r-', FLEET)
    await fleet.open('1.0.0')
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: 'root-password' }),
    })
    token = ((await login.json()) as { token: string }).token
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
  })
  afterAll(async () => {
    fleet?.closeAll()
    await context?.close()
    await browser?.close()
    await server?.close()
  })

  const table = () => page.getByRole('table', { name: 'Machines', exact: true })

  /** What the table shows: id, Status and Version of each row. */
  const shown = () =>
    table()
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')).map(([id, status, version]) => ({ id, status, version })))
      .then((rows) => rows as Row[])

  /** What the server says of the same page, and its counts. */
  const truth = async (query: string) => {
    const res = await fetch(`${server.url}/api/v1/devices?limit=100&counts=true${query}`, { headers: { authorization: `Bearer ${token}` } })
    const body = (await res.json()) as { devices: { device_id: string; alive: boolean; version: string }[]; counts: { total: number; online: number } }
    return {
      rows: body.devices.map((d) => ({ id: d.device_id, status: d.alive ? 'Online' : 'Offline', version: d.version })),
      counts: `${body.counts.online} of ${body.counts.total} online`,
    }
  }

  const countsText = () => page.getByText(/^\d+ of \d+ online$/).textContent()

  it('settles on the truth after every link drops and half re-link, asking for at most 50 list pages and cancelling none', async () => {
    await signIn(page, 'root', 'root-password')
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Live')
    await table().getByRole('link', { name: fleetDeviceId('r-', 0), exact: true }).waitFor()
    await expect.poll(countsText).toBe(`${FLEET + 1} of ${FLEET + 1} online`)

    const listRequests: string[] = []
    const cancelled: string[] = []
    page.on('request', (r) => void (r.url().includes('/api/v1/devices?') && listRequests.push(r.url())))
    page.on('requestfailed', (r) => void (r.url().includes('/api/v1/devices?') && cancelled.push(`${r.url()} ${r.failure()?.errorText}`)))

    // A restart as the machines see it: every link drops at once; the even ones come back with a new version.
    fleet.closeAll()
    await fleet.open('2.0.0', (i) => i % 2 === 0)
    // The server's own answer, once it has seen every link go (a drop may be noticed after the re-links).
    await expect.poll(async () => (await truth('')).counts, { timeout: 30_000 }).toBe(`${FLEET / 2 + 1} of ${FLEET + 1} online`)
    const expected = await truth('')
    await expect.poll(shown, { timeout: 30_000, interval: 250 }).toEqual(expected.rows)
    await expect.poll(countsText, { timeout: 30_000, interval: 250 }).toBe(expected.counts)

    console.log(`${FLEET} links dropped, ${FLEET / 2} re-linked: the page asked for ${listRequests.length} list pages (at most ${MAX_LIST_PAGES})`)
    expect(listRequests.length).toBeGreaterThan(0)
    expect(listRequests.length).toBeLessThanOrEqual(MAX_LIST_PAGES)
    expect(cancelled).toEqual([])
    // Settled means quiet: no more list requests once the events have stopped.
    const settled = listRequests.length
    await new Promise((resolve) => setTimeout(resolve, 4_000))
    expect(listRequests.length - settled).toBeLessThanOrEqual(1)
    expect(await shown()).toEqual(expected.rows)
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machines-relinked')
  })

  it('keeps the search and the page in the URL, through a reload', async () => {
    await page.getByRole('searchbox', { name: 'Find by machine id', exact: true }).fill('r-01')
    await expect.poll(() => new URL(page.url()).search).toBe('?q=r-01')
    await table().getByRole('link', { name: 'r-0199', exact: true }).waitFor()
    expect(await table().getByRole('link', { name: 'r-0200', exact: true }).count()).toBe(0)
    const matching = (await truth('&prefix=r-01')).counts.replace(' online', ' matching machines online')
    expect(matching).toBe('50 of 100 matching machines online')
    await expect.poll(() => page.getByText(/matching machines online$/).textContent()).toBe(matching)

    await page.goto('/machines')
    await table().getByRole('link', { name: 'pnp-01', exact: true }).waitFor()
    await page.getByRole('button', { name: 'Next page', exact: true }).click()
    await expect.poll(() => new URL(page.url()).searchParams.get('after')).toBe('r-0098')
    await table().getByRole('link', { name: 'r-0099', exact: true }).waitFor()
    expect(await page.getByText('Page 2', { exact: true }).count()).toBe(1)
    await page.reload()
    await table().getByRole('link', { name: 'r-0099', exact: true }).waitFor()
    expect(await table().getByRole('link', { name: 'pnp-01', exact: true }).count()).toBe(0)
    await page.getByRole('button', { name: 'Previous page', exact: true }).click()
    await table().getByRole('link', { name: 'pnp-01', exact: true }).waitFor()
    await page.goBack()
    await table().getByRole('link', { name: 'r-0099', exact: true }).waitFor()
  })

  it('reads in Chinese: the live status, the count and the search', async () => {
    await page.goto('/machines')
    await page.getByRole('combobox', { name: 'Language', exact: true }).selectOption('zh-CN')
    await expect.poll(() => page.getByRole('status').textContent()).toBe('实时')
    await page.getByRole('searchbox', { name: '按机器 ID 查找', exact: true }).waitFor()
    await expect.poll(() => page.getByText(/^\d+ 台中 \d+ 台在线$/).count()).toBe(1)
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'machines-relinked-zh')
    await page.getByRole('combobox', { name: '语言', exact: true }).selectOption('en')
  })
})
