import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEVICE_LINK_PATH } from '@fleetgate/device-agent/protocol'
import { RawDevice } from '../gateway/helpers/raw-device.js'
import { loginAs } from '../helpers/test-app.js'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, SCREENSHOTS, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

/**
 * Production (§16) in the console against the real server: a machine reports over the real
 * device link (state, job and placement events, acknowledged once stored), and the console shows
 * /production, the machine's region "Production" (its state live), in English, Chinese, and in
 * a German browser in Tokyo with German dates and numbers (§12).
 */
describe.skipIf(!chromiumAvailable())('console: production', () => {
  let server: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let machine: RawDevice
  const now = Math.floor(Date.now() / 1000)
  let sent = 0

  const checkAxe = async (where: string, on: Page = page) => expect(describeViolations(await seriousViolations(on)), `axe on ${where}`).toBe('')
  const cells = (on: Page, table: string, row: string) =>
    on.getByRole('table', { name: table, exact: true }).getByRole('row').filter({ hasText: row }).first().getByRole('cell').allTextContents()
  /** Sends production events over the link and waits for the gateway's acknowledgement (they are stored then). */
  const report = async (events: Record<string, unknown>[]) => {
    const withIds = events.map((e) => ({ id: `e-${++sent}`, ...e }))
    const ack = machine.next((f) => f.type === 'production-ack')
    machine.send({ type: 'production', events: withIds })
    const answer = await ack
    expect(answer.rejected).toEqual([])
    expect(answer.ids).toEqual(withIds.map((e) => e.id))
  }

  beforeAll(async () => {
    server = await startConsoleServer({ machines: 1 })
    const linkUrl = `${server.url.replace('http', 'ws')}${DEVICE_LINK_PATH}`
    machine = await RawDevice.link(linkUrl, { device_id: 'smt-fast', rated_cph: 4000 } as Parameters<typeof RawDevice.link>[1])
    // Two hours ago it started placing; an hour later it stood by. 5,000 placed in its productive hour: CPH 5,000, 125% of its rating.
    await report([
      { ts: now - 7200, kind: 'state', state: 'productive' },
      { ts: now - 7190, kind: 'job_started', job_id: 'job-42', order_id: 'o-7', boards_planned: 10 },
      {
        ts: now - 3700,
        kind: 'placements',
        placed: 5000,
        missed: 25,
        job_id: 'job-42',
        feeders: [
          { feeder: 'F1', placed: 3000, missed: 5 },
          { feeder: 'F7', placed: 2000, missed: 20 },
        ],
      },
      { ts: now - 3650, kind: 'job_ended', job_id: 'job-42', result: 'completed', boards_done: 10 },
      { ts: now - 3600, kind: 'state', state: 'standby' },
    ])
    const authorization = await loginAs(server.test.app, 'root')
    const res = await server.test.app.inject({ method: 'PUT', url: '/api/v1/admin/devices/smt-fast/labels', headers: { authorization }, payload: { labels: { line: 'l1' } } })
    expect(res.statusCode).toBe(200)
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
    await signIn(page, 'root', 'root-password')
  })
  afterAll(async () => {
    await machine?.close()
    await context?.close()
    await browser?.close()
    await server?.close()
  })

  it('shows the fleet’s production grouped by machine and by label, ratios over 100% as they are, missing figures as "—"', async () => {
    await page.getByRole('link', { name: 'Production', exact: true }).click()
    const table = page.getByRole('table', { name: 'Production', exact: true })
    await expect.poll(() => cells(page, 'Production', 'smt-fast'), { timeout: 10_000 }).toEqual(expect.arrayContaining(['smt-fast', '1', '125%', '99.5%', '5,000', '5,000', '25']))
    const row = await cells(page, 'Production', 'smt-fast')
    expect(row.slice(0, 2)).toEqual(['smt-fast', '1'])
    expect(row.slice(4, 9)).toEqual(['125%', '99.5%', '5,000', '5,000', '25'])
    // The simulated machine reported nothing: no figure, said so.
    const idle = await cells(page, 'Production', 'pnp-01')
    expect(idle[2]).toContain('—')
    expect(idle[2]).toContain('No figure')
    await page.getByRole('img', { name: 'OEE', exact: true }).waitFor()
    await checkAxe('/production')
    await page.getByLabel('Group by', { exact: true }).selectOption('label:line')
    await expect.poll(() => table.getByRole('row').allTextContents(), { timeout: 10_000 }).toEqual(expect.arrayContaining([expect.stringContaining('line=l1'), expect.stringContaining('Without label line')]))
    expect(new URL(page.url()).searchParams.get('group_by')).toBe('label:line')
    await page.getByLabel('Range', { exact: true }).selectOption('7d')
    await expect.poll(() => cells(page, 'Production', 'line=l1'), { timeout: 10_000 }).toEqual(expect.arrayContaining(['125%', '5,000']))
    await page.getByLabel('Group by', { exact: true }).selectOption('device')
    await expect.poll(() => cells(page, 'Production', 'smt-fast'), { timeout: 10_000 }).toEqual(expect.arrayContaining(['125%']))
    await screenshot(page, 'production-en')
    // The viewport only: the picture docs/console-production.png is copied from.
    await screenshot(page, 'production-viewport-en', { fullPage: false })
  })

  it('shows a machine’s region "Production": feeders worst first, jobs, charts, and its state live', async () => {
    await page.getByRole('table', { name: 'Production', exact: true }).getByRole('link', { name: 'smt-fast', exact: true }).click()
    const region = page.getByRole('region', { name: 'Production', exact: true })
    const feeders = region.getByRole('table', { name: 'Feeders', exact: true })
    await expect.poll(() => feeders.getByRole('row').allTextContents(), { timeout: 10_000 }).toHaveLength(3)
    const rows = await feeders.getByRole('row').allTextContents()
    expect(rows[1]).toMatch(/^F7.*Worst.*2,000.*20.*0\.99%$/)
    expect(rows[2]).toMatch(/^F1/)
    await expect.poll(() => cells(page, 'Jobs', 'job-42'), { timeout: 10_000 }).toEqual(expect.arrayContaining(['job-42', 'Completed', '10 of 10', '5,000', '25']))
    await region.getByRole('img', { name: 'State timeline', exact: true }).waitFor()
    await region.getByRole('img', { name: 'Placements per hour', exact: true }).waitFor()
    await expect.poll(() => region.textContent(), { timeout: 10_000 }).toContain('Productive: 1:00:00')
    // The feeder runs empty: the machine says so, and the page follows without a reload.
    await report([{ ts: Date.now() / 1000, kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted' }])
    await expect.poll(() => region.getByText('Current state:').textContent(), { timeout: 10_000 }).toContain('Unscheduled down · reason: parts exhausted')
    await checkAxe('the machine’s region Production')
    await screenshot(page, 'machine-production-en')
    // The region alone: the picture docs/console-machine-production.png is copied from.
    mkdirSync(SCREENSHOTS, { recursive: true })
    await region.screenshot({ path: path.join(SCREENSHOTS, 'machine-production-region-en.png') })
  })

  it('shows both pages in Chinese', async () => {
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    await page.getByRole('region', { name: '生产', exact: true }).getByRole('table', { name: '飞达', exact: true }).waitFor()
    await checkAxe('the machine page in Chinese')
    await screenshot(page, 'machine-production-zh')
    await page.getByRole('region', { name: '生产', exact: true }).screenshot({ path: path.join(SCREENSHOTS, 'machine-production-region-zh.png') })
    await page.getByRole('link', { name: '生产', exact: true }).click()
    await page.getByRole('table', { name: '生产', exact: true }).getByRole('row').filter({ hasText: 'smt-fast' }).waitFor()
    await checkAxe('/production in Chinese')
    await screenshot(page, 'production-zh')
    await screenshot(page, 'production-viewport-zh', { fullPage: false })
    await page.getByLabel('语言', { exact: true }).selectOption('en')
  })

  it('writes dates and numbers the German way in a German browser, and times in its zone', async () => {
    const german = await newContext(browser, server.url, 'de-DE', { timezoneId: 'Asia/Tokyo' })
    try {
      const de = await german.newPage()
      await signIn(de, 'root', 'root-password')
      // The words stay English (a de browser does not start in Chinese); dates and numbers are German.
      await de.goto('/audit')
      const audit = de.getByRole('table', { name: 'Audit log', exact: true })
      await audit.getByRole('row').nth(1).waitFor()
      const time = (await audit.getByRole('row').nth(1).getByRole('cell').first().textContent()) ?? ''
      const written = /^(\d{1,2})\.(\d{1,2})\.(\d{4}), (\d{2}):(\d{2}):(\d{2})$/.exec(time)
      expect(written, time).not.toBeNull()
      // Tokyo's clock (UTC+9), not UTC's: the entry was written in the last minutes, read as Tokyo's wall time.
      const [, day, month, year, hour, minute, second] = written!.map(Number)
      const tokyoWallAsUtc = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!)
      const ageMs = Date.now() + 9 * 3600_000 - tokyoWallAsUtc
      expect(ageMs).toBeGreaterThanOrEqual(-1000)
      expect(ageMs).toBeLessThan(10 * 60_000)
      await de.goto('/production')
      await de.getByRole('table', { name: 'Production', exact: true }).getByRole('row').nth(1).waitFor()
      await expect.poll(() => cells(de, 'Production', 'smt-fast'), { timeout: 10_000 }).toEqual(expect.arrayContaining(['125\u00a0%', '99,5\u00a0%', '5.000', '25']))
      await de.goto('/machines/smt-fast')
      const feeders = de.getByRole('table', { name: 'Feeders', exact: true })
      await expect.poll(() => feeders.getByRole('row').nth(1).textContent(), { timeout: 10_000 }).toMatch(/F7.*2\.000.*0,99\u00a0%/)
      await expect.poll(() => cells(de, 'Jobs', 'job-42'), { timeout: 10_000 }).toEqual(expect.arrayContaining([expect.stringMatching(/^\d{1,2}\.\d{1,2}\.\d{4}, \d{2}:\d{2}:\d{2}$/)]))
      await screenshot(de, 'machine-production-de')
    } finally {
      await german.close()
    }
  })
})
