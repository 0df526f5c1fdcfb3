import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'

const DEVICE = 'pnp-iot-01'

describe.skipIf(!chromiumAvailable())('console: an administrator runs the platform devices', () => {
  let server: ConsoleServer
  let browser: Browser

  /** The admin API as another client would call it (setup and checks only; the journeys use the page). */
  const admin = async <T>(path: string, json?: unknown): Promise<T> => {
    const res = await fetch(server.url + path, {
      method: json === undefined ? 'GET' : 'POST',
      headers: { 'x-console-token': server.test.config.platformConsoleToken!, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    })
    expect(res.status, `${path} answered ${res.status}`).toBeLessThan(300)
    return (await res.json()) as T
  }

  /** What a device itself posts (contract §7). */
  const device = async (path: string, json: unknown) => {
    const res = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) })
    expect(res.status, `${path} answered ${res.status}`).toBeLessThan(300)
  }

  const checkAxe = async (page: Page, where: string) => expect(describeViolations(await seriousViolations(page)), `axe on ${where}`).toBe('')

  const openDevicePage = async (page: Page) => {
    await page.goto(`/platform/devices/${DEVICE}`)
    await page.getByRole('heading', { name: DEVICE, exact: true }).waitFor()
  }

  beforeAll(async () => {
    server = await startConsoleServer({
      machines: 0,
      platform: 2,
      // The simulated devices beat every second; a device that stops is offline 4 s later.
      env: { PLATFORM_OFFLINE_SECONDS: '4' },
      sim: { platformIntervals: { heartbeatMs: 1000, sampleMs: 250, flushMs: 500, pollMs: 300 } },
    })
    browser = await launchChromium()
    // 130 log entries beside the device's own (enough for 3 pages).
    const entries = Array.from({ length: 130 }, (_, i) => ({ level: i % 2 ? 'info' : 'error', tag: 'seed', message: `seeded entry ${i}` }))
    await device(`/v1/device/${DEVICE}/logs/batch`, entries)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('sees the summary, adds a device (its token shown once) and watches it come online live', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.getByRole('link', { name: 'Platform', exact: true }).click()
    await page.getByRole('heading', { name: 'Platform', exact: true }).waitFor()
    await expect.poll(() => page.getByRole('region', { name: 'Online devices', exact: true }).textContent()).toContain('2 of 2 online')
    await page.getByRole('region', { name: 'Commands', exact: true }).waitFor()
    await checkAxe(page, '/platform')
    await screenshot(page, 'platform-summary-en')

    await page.getByRole('link', { name: 'Devices', exact: true }).click()
    const table = page.getByRole('table', { name: 'Devices', exact: true })
    const rowOf = (id: string) => table.getByRole('row').filter({ has: page.getByRole('link', { name: id, exact: true }) })
    for (const id of ['pnp-iot-01', 'pnp-iot-02']) await expect.poll(() => rowOf(id).getByRole('cell').nth(1).textContent()).toBe('Online')
    await checkAxe(page, '/platform/devices')

    await page.getByRole('button', { name: 'Add device', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Add device', exact: true })
    await dialog.getByRole('textbox', { name: 'Device id', exact: true }).fill('lab-7')
    await dialog.getByRole('textbox', { name: 'Model', exact: true }).fill('esp32-c3')
    await dialog.getByRole('button', { name: 'Add', exact: true }).click()
    const token = dialog.getByRole('textbox', { name: 'Device token', exact: true })
    await expect.poll(async () => (await token.inputValue()).length).toBeGreaterThan(16)
    await checkAxe(page, 'the Add device dialog')
    await screenshot(page, 'platform-add-device-en')
    await dialog.getByRole('button', { name: 'Close', exact: true }).click()
    await expect.poll(() => rowOf('lab-7').getByRole('cell').nth(1).textContent()).toBe('Offline')
    expect(await rowOf('lab-7').getByRole('cell').nth(2).textContent()).toBe('esp32-c3')

    // The new device's first heartbeat: the row turns Online with no reload (§11 platform-device).
    await device('/v1/device/heartbeat', { device_id: 'lab-7', firmware_version: '0.9.1' })
    await expect.poll(() => rowOf('lab-7').getByRole('cell').nth(1).textContent()).toBe('Online')
    expect(await rowOf('lab-7').getByRole('cell').nth(3).textContent()).toBe('0.9.1')
    // No heartbeat since: Offline after PLATFORM_OFFLINE_SECONDS, again without a reload.
    await expect.poll(() => rowOf('lab-7').getByRole('cell').nth(1).textContent(), { timeout: 15_000 }).toBe('Offline')
    await screenshot(page, 'platform-devices-en')
    await context.close()
  })

  it('charts telemetry by key and range, filters the logs by level and loads older pages', async () => {
    // The simulated device reports its three keys within a second or two of the start.
    const telemetryKeys = async () => Object.keys((await admin<{ latest_telemetry: object }>(`/api/admin/device/${DEVICE}/detail`)).latest_telemetry)
    await expect.poll(telemetryKeys, { timeout: 15_000, interval: 200 }).toEqual(expect.arrayContaining(['temperature', 'humidity', 'rssi']))
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await openDevicePage(page)
    const chart = page.getByRole('img', { name: 'Telemetry', exact: true })
    await chart.waitFor()
    expect(await chart.evaluate((el) => el.tagName)).toBe('CANVAS')
    const key = page.getByRole('combobox', { name: 'Key', exact: true })
    expect(await key.getByRole('option').allTextContents()).toEqual(expect.arrayContaining(['temperature', 'humidity', 'rssi']))
    await key.selectOption('humidity')
    await page.getByRole('combobox', { name: 'Range', exact: true }).selectOption({ label: 'Last 15 minutes' })
    await expect.poll(() => page.getByRole('figure').textContent()).toMatch(/^humidity: \d+ points/)

    const logs = page.getByRole('table', { name: 'Logs', exact: true })
    const levels = () => logs.getByRole('row').locator('td:nth-child(2)').allTextContents()
    await page.getByRole('combobox', { name: 'Level', exact: true }).selectOption('error')
    await expect.poll(async () => (await levels()).length).toBe(50)
    expect(new Set(await levels())).toEqual(new Set(['error']))
    await page.getByRole('button', { name: 'Load more', exact: true }).click()
    await expect.poll(async () => (await levels()).length).toBe(65)
    expect(new Set(await levels())).toEqual(new Set(['error']))
    // The last page is shown: no older entries to load.
    expect(await page.getByRole('button', { name: 'Load more', exact: true }).count()).toBe(0)
    await checkAxe(page, '/platform/devices/{id}')
    await screenshot(page, 'platform-device-en')
    await context.close()
  })

  it('sends a command from the generated form and sees its status turn done live; a refused one shows the server’s message', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await openDevicePage(page)
    const form = page.getByRole('form', { name: 'Send command', exact: true })
    const action = form.getByRole('combobox', { name: 'Action', exact: true })
    const { actions } = await admin<{ actions: { action: string }[] }>('/api/admin/meta')
    await action.waitFor()
    expect(await action.getByRole('option').allTextContents()).toEqual(actions.map((a) => a.action))

    await action.selectOption('bleep')
    await form.getByRole('spinbutton', { name: 'duration', exact: true }).fill('120')
    await form.getByRole('button', { name: 'Send', exact: true }).click()
    const commands = page.getByRole('table', { name: 'Commands', exact: true })
    const bleep = commands.getByRole('row').filter({ has: page.getByRole('cell', { name: 'bleep', exact: true }) })
    await bleep.waitFor()
    await expect.poll(() => bleep.getByRole('cell').nth(2).textContent(), { timeout: 10_000 }).toBe('done')
    expect(await bleep.getByRole('cell').nth(3).textContent()).toBe('1')
    // What the device answered (an object: JSON), and no error.
    await expect.poll(() => bleep.getByRole('cell').nth(4).textContent()).toBe('{ "beeped_ms": 120 }')
    expect(await bleep.getByRole('cell').nth(5).textContent()).toBe('—')

    await action.selectOption('hid_combo')
    await form.getByRole('listbox', { name: 'keys', exact: true }).selectOption(['LCTRL', 'C'])
    await form.getByRole('button', { name: 'Send', exact: true }).click()
    const combo = commands.getByRole('row').filter({ has: page.getByRole('cell', { name: 'hid_combo', exact: true }) })
    await expect.poll(() => combo.getByRole('cell').nth(2).textContent(), { timeout: 10_000 }).toBe('done')
    const queued = await admin<{ commands: { action: string; params: unknown }[] }>(`/api/admin/commands?device_id=${DEVICE}&limit=5`)
    expect(queued.commands.find((c) => c.action === 'hid_combo')?.params).toEqual({ keys: ['C', 'LCTRL'] })

    // Keyboard alone: type-ahead in the Action select, Tab to the first param, type, Enter sends.
    await action.focus()
    await page.keyboard.type('bleep')
    await page.keyboard.press('Tab')
    await page.keyboard.type('30')
    await page.keyboard.press('Enter')
    await expect.poll(() => form.getByRole('status').textContent()).toMatch(/^Command #3 queued\.$/)
    await expect.poll(() => commands.getByRole('row').filter({ hasText: /^3/ }).getByRole('cell').nth(2).textContent(), { timeout: 10_000 }).toBe('done')

    await action.selectOption('hid_scroll')
    await form.getByRole('spinbutton', { name: 'wheel', exact: true }).fill('0')
    await form.getByRole('button', { name: 'Send', exact: true }).click()
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('wheel')
    await checkAxe(page, 'the command form with an error')
    await screenshot(page, 'platform-command-en')
    await context.close()
  })

  it('clears logs and commands only after Confirm', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await openDevicePage(page)
    const commands = page.getByRole('table', { name: 'Commands', exact: true })
    await commands.getByRole('cell', { name: 'bleep', exact: true }).first().waitFor()

    await page.getByRole('button', { name: 'Clear commands', exact: true }).click()
    const confirmCommands = page.getByRole('dialog', { name: 'Clear commands', exact: true })
    await confirmCommands.getByRole('button', { name: 'Cancel', exact: true }).click()
    expect(await commands.getByRole('cell', { name: 'bleep', exact: true }).count()).toBeGreaterThan(0)

    await page.getByRole('button', { name: 'Clear commands', exact: true }).click()
    await checkAxe(page, 'the confirmation dialog')
    await screenshot(page, 'platform-confirm-en')
    await confirmCommands.getByRole('button', { name: 'Confirm', exact: true }).click()
    await expect.poll(() => commands.getByRole('cell', { name: 'bleep', exact: true }).count()).toBe(0)

    await page.getByRole('button', { name: 'Clear logs', exact: true }).click()
    await page.getByRole('dialog', { name: 'Clear logs', exact: true }).getByRole('button', { name: 'Confirm', exact: true }).click()
    // The simulated device keeps logging (a line every ~1.25 s), so the table may not stay empty:
    // what counts is that the 50 rows shown before are gone.
    await expect.poll(() => page.getByRole('table', { name: 'Logs', exact: true }).getByRole('row').count()).toBeLessThan(5)

    // Every write is in the operation log.
    await page.goto('/platform/logs')
    const oplog = page.getByRole('table', { name: 'Operation log', exact: true })
    for (const tag of ['device.add', 'command.create', 'commands.clear', 'logs.clear']) await oplog.getByRole('cell', { name: tag, exact: true }).first().waitFor()
    await checkAxe(page, '/platform/logs')
    await screenshot(page, 'platform-operation-log-en')
    await context.close()
  })

  it('shows each command’s result and error as the device reported them: text as text, anything else as JSON', async () => {
    const probe = 'cmd-probe'
    const { device_token } = await admin<{ device_token: string }>('/api/admin/device/add', { device_id: probe, model: 'esp32-s3' })
    const ids: number[] = []
    for (const action of ['ping', 'reboot', 'ping']) ids.push((await admin<{ command: { id: number } }>(`/api/admin/device/${probe}/command`, { action, params: {} })).command.id)
    const headers = { 'x-device-token': device_token, 'content-type': 'application/json' }
    expect((await fetch(`${server.url}/v1/device/${probe}/commands`, { headers })).status).toBe(200)
    const acks = [
      { id: ids[0], success: true, result: 'pong from the bench' },
      { id: ids[1], success: false, error: 'motor stalled' },
      { id: ids[2], success: true, result: { pong: true, temps: [41.5, 39], nested: { fan: 'on' } } },
    ]
    const ack = await fetch(`${server.url}/v1/device/${probe}/commands/ack`, { method: 'POST', headers, body: JSON.stringify({ acks }) })
    expect(ack.status).toBe(200)

    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.goto(`/platform/devices/${probe}`)
    const commands = page.getByRole('table', { name: 'Commands', exact: true })
    await expect.poll(() => commands.getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['Result', 'Error']))
    // The row whose Id cell (the first) is `id`: its text starts with the id, then the action.
    const row = (id: number) => commands.getByRole('row').filter({ hasText: new RegExp(`^${id}(ping|reboot)`) })
    await expect.poll(() => row(ids[0]!).getByRole('cell').nth(4).textContent()).toBe('pong from the bench')
    expect(await row(ids[0]!).getByRole('cell').nth(5).textContent()).toBe('—')
    expect(await row(ids[1]!).getByRole('cell').nth(2).textContent()).toBe('failed')
    expect(await row(ids[1]!).getByRole('cell').nth(4).textContent()).toBe('—')
    expect(await row(ids[1]!).getByRole('cell').nth(5).textContent()).toBe('motor stalled')
    // Longer than a line: formatted JSON, as the device sent it.
    expect(await row(ids[2]!).getByRole('cell').nth(4).textContent()).toBe(JSON.stringify(acks[2]!.result, null, 2))
    const text = await commands.textContent()
    expect(text).not.toContain('undefined')
    expect(text).not.toContain('[object Object]')
    await checkAxe(page, 'the commands table with results and errors')
    await screenshot(page, 'platform-command-results-en')
    await context.close()
  })

  it('shows the device page in Chinese: chart, command form, commands table and clear-logs button named in Chinese, and passes axe', async () => {
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    await page.goto('/platform')
    await page.getByRole('heading', { name: '平台', exact: true }).waitFor()
    await checkAxe(page, '/platform in Chinese')
    await screenshot(page, 'platform-summary-zh')
    await page.getByRole('link', { name: '设备', exact: true }).click()
    await page.getByRole('table', { name: '设备', exact: true }).getByRole('link', { name: DEVICE, exact: true }).waitFor()
    await checkAxe(page, '/platform/devices in Chinese')
    await screenshot(page, 'platform-devices-zh')
    await page.getByRole('table', { name: '设备', exact: true }).getByRole('link', { name: DEVICE, exact: true }).click()
    // The telemetry chart, the command form, the commands table and the clear-logs button, each named in Chinese.
    const named = [
      page.getByRole('img', { name: '遥测', exact: true }),
      page.getByRole('form', { name: '发送命令', exact: true }),
      page.getByRole('table', { name: '命令', exact: true }),
      page.getByRole('button', { name: '清空日志', exact: true }),
    ]
    await expect.poll(() => Promise.all(named.map((l) => l.count()))).toEqual([1, 1, 1, 1])
    await expect.poll(() => page.getByRole('table', { name: '命令', exact: true }).getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['结果', '错误']))
    await checkAxe(page, '/platform/devices/{id} in Chinese')
    await screenshot(page, 'platform-device-zh')
    await page.goto('/platform/logs')
    await page.getByRole('table', { name: '操作日志', exact: true }).getByRole('cell').first().waitFor()
    await checkAxe(page, '/platform/logs in Chinese')
    await screenshot(page, 'platform-operation-log-zh')
    await context.close()
  })

  it('pages through 5,000 devices one page of 100 rows at a time', async () => {
    const now = Date.now()
    for (let i = 0; i < 5000; i += 500) {
      const rows = Array.from({ length: 500 }, (_, j) => ({
        device_id: `fleet-${String(i + j).padStart(5, '0')}`, model: 'esp32-s3', firmware_version: '2.0.0', ip: '10.0.0.9', token_hash: null,
        expression: null, uptime_s: null, rssi: null, created_at: now, last_online_at: now - 3_600_000,
      }))
      await server.test.storage.db.insertInto('platform_devices').values(rows).execute()
    }
    const context = await newContext(browser, server.url)
    const page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    const table = page.getByRole('table', { name: 'Devices', exact: true })
    const t0 = Date.now()
    await page.goto('/platform/devices')
    await table.getByRole('link', { name: 'fleet-00000', exact: true }).waitFor()
    const firstPage = Date.now() - t0
    expect(await table.getByRole('row').count()).toBe(101)
    const pageTimes: number[] = []
    for (let p = 1; p <= 5; p++) {
      const t = Date.now()
      await page.getByRole('button', { name: 'Next page', exact: true }).click()
      await table.getByRole('link', { name: `fleet-${String(p * 100).padStart(5, '0')}`, exact: true }).waitFor()
      pageTimes.push(Date.now() - t)
    }
    expect(await table.getByRole('row').count()).toBe(101)
    expect(await table.getByRole('row').nth(1).getByRole('cell').nth(1).textContent()).toBe('Offline')
    await page.getByRole('button', { name: 'Previous page', exact: true }).click()
    await table.getByRole('link', { name: 'fleet-00400', exact: true }).waitFor()
    // Measured for the report, not asserted (shared machines vary).
    console.log(`devices table with 5,000 devices: first page in ${firstPage} ms, next pages ${pageTimes.join(', ')} ms`)
    await context.close()
  })
})
