import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'
import { signedReleases } from '../helpers/signed-releases.js'

/** Build 30 is large (1.2 MB), so its upload lasts long enough under a throttled link to show its progress. */
const LARGE_BUILD = 30
const { rootPubkey, release } = signedReleases({
  version: { major: 1, minor: 4, revision: 2 },
  payload: (build) => (build === LARGE_BUILD ? Buffer.alloc(1_200_000, build) : Buffer.from(`controller build ${build} `.repeat(100))),
})

describe.skipIf(!chromiumAvailable())('console: firmware releases and the audit log', () => {
  let server: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let dir: string
  const files = (name: string, image: Buffer, manifest: unknown) => {
    const imagePath = path.join(dir, `${name}.bin`)
    const manifestPath = path.join(dir, `${name}.json`)
    writeFileSync(imagePath, image)
    writeFileSync(manifestPath, JSON.stringify(manifest))
    return { imagePath, manifestPath }
  }
  const upload = async (f: { imagePath: string; manifestPath: string }) => {
    await page.getByLabel('Firmware image', { exact: true }).setInputFiles(f.imagePath)
    await page.getByLabel('Manifest', { exact: true }).setInputFiles(f.manifestPath)
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'console-fw-'))
    server = await startConsoleServer({ machines: 1, env: { FIRMWARE_ROOT_PUBKEY: rootPubkey } })
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
    await signIn(page, 'root', 'root-password')
    await page.getByRole('link', { name: 'Firmware', exact: true }).click()
    await page.getByRole('table', { name: 'Releases', exact: true }).waitFor()
  })
  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('lists every reason of a rejected upload in an alert', async () => {
    const good = release(11)
    const bad = { ...good.manifest, system: { ...good.manifest.system, sha256: '0'.repeat(64), crc32: 'deadbeef' } }
    await upload(files('bad', good.image, bad))
    const alert = page.getByRole('alert')
    await alert.waitFor()
    const items = await alert.getByRole('listitem').allTextContents()
    expect(items.length).toBeGreaterThanOrEqual(2)
    expect(items.join('\n')).toMatch(/sha256/i)
    expect(items.join('\n')).toMatch(/crc/i)
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'firmware-rejected')
  })

  it('uploads two releases, activates one, and counts its downloads', { timeout: 60_000 }, async () => {
    for (const build of [21, 22]) {
      const r = release(build)
      await upload(files(`r${build}`, r.image, r.manifest))
      await page.getByRole('status').filter({ hasText: r.manifest.release }).waitFor()
    }
    const table = page.getByRole('table', { name: 'Releases', exact: true })
    await expect.poll(() => table.getByRole('button', { name: 'Activate', exact: true }).count()).toBe(2)
    const row = table.getByRole('row').filter({ hasText: '1.4.2-21' })
    // Activating touches the fleet: it asks first, and Cancel changes nothing.
    await row.getByRole('button', { name: 'Activate', exact: true }).click()
    const ask = page.getByRole('dialog', { name: 'Activate', exact: true })
    expect(await ask.textContent()).toContain('1.4.2-21')
    await ask.getByRole('button', { name: 'Cancel', exact: true }).click()
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('No')
    await row.getByRole('button', { name: 'Activate', exact: true }).click()
    await ask.getByRole('button', { name: 'Confirm', exact: true }).click()
    await expect.poll(() => row.getByRole('cell').nth(2).textContent()).toBe('Yes')
    expect(await row.getByRole('button', { name: 'Activate', exact: true }).count()).toBe(0)
    expect((await fetch(`${server.url}/api/v1/firmware/slave/system.bin`)).status).toBe(200)
    // Downloads are counted in memory and written every 10 s (anonymous requests write nothing at once).
    await expect
      .poll(
        async () => {
          await page.reload()
          return table.getByRole('row').filter({ hasText: '1.4.2-21' }).getByRole('cell').nth(3).textContent()
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toBe('1')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'firmware-en')
  })

  it('shows the upload progress while a large image is sent, then its size and SHA-256', async () => {
    const large = release(LARGE_BUILD)
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    // About 200 kB/s up: the 1.2 MB image takes some seconds.
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 200_000 })
    await upload(files('large', large.image, large.manifest))
    const bar = page.getByRole('progressbar', { name: 'Upload progress', exact: true })
    await bar.waitFor()
    await expect.poll(() => bar.getAttribute('aria-valuenow').then(Number)).toBeGreaterThan(0)
    expect(await bar.getAttribute('aria-valuetext')).toMatch(/^\d+ % sent$/)
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'firmware-uploading-en')
    await page.getByRole('status').filter({ hasText: large.manifest.release }).waitFor({ timeout: 30_000 })
    expect(await bar.count()).toBe(0)
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await cdp.detach()

    const table = page.getByRole('table', { name: 'Releases', exact: true })
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['Size', 'SHA-256']))
    const row = table.getByRole('row').filter({ hasText: large.manifest.release })
    const mB = new Intl.NumberFormat('en-US', { style: 'unit', unit: 'megabyte', unitDisplay: 'short', maximumFractionDigits: 1 }).format(large.image.length / 1e6)
    await expect.poll(() => row.getByRole('cell').nth(4).textContent()).toBe(mB)
    const sha = createHash('sha256').update(large.image).digest('hex')
    const shaCell = row.getByRole('cell').nth(5)
    expect(await shaCell.locator('code').textContent()).toBe(`${sha.slice(0, 12)}…`)
    expect(await shaCell.locator('code').getAttribute('title')).toBe(sha)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await shaCell.getByRole('button', { name: `Copy the SHA-256 of ${large.manifest.release}`, exact: true }).click()
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(sha)
  })

  it('shows the uploads and the activation in the audit log, with Load more', async () => {
    await page.getByRole('link', { name: 'Audit', exact: true }).click()
    const table = page.getByRole('table', { name: 'Audit log', exact: true })
    await table.waitFor()
    const text = await table.textContent()
    expect(text).toContain('1.4.2-21')
    expect(text).toMatch(/activate/i)
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['Time', 'Actor', 'Action', 'Target']))
    await page.getByRole('button', { name: 'Load more', exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'audit-en')
  })

  it('filters the audit log by action, actor and release, in the URL, and Load more keeps the filter', async () => {
    // 70 records of another actor: more than one page (50) of them.
    const at = Date.now() / 1000 - 3600
    const filler = Array.from({ length: 70 }, (_, i) => ({ at: at + i, actor: 'robot', action: 'device.forget', release_id: null, device_id: `pnp-${i}`, outcome: 'not_found', detail: '{}' }))
    await server.test.storage.db.insertInto('audit_log').values(filler).execute()
    const table = page.getByRole('table', { name: 'Audit log', exact: true })
    const column = (n: number) => table.locator('tbody tr').locator(`td:nth-child(${n})`).allTextContents()
    const filters = page.getByRole('search', { name: 'Filters', exact: true })
    await filters.getByRole('textbox', { name: 'Actor', exact: true }).fill('robot')
    await filters.getByRole('button', { name: 'Apply', exact: true }).click()
    await page.waitForURL((url) => url.searchParams.get('actor') === 'robot')
    await expect.poll(async () => (await column(2)).length).toBe(50)
    expect(new Set(await column(2))).toEqual(new Set(['robot']))
    await page.getByRole('button', { name: 'Load more', exact: true }).click()
    await expect.poll(async () => (await column(2)).length).toBe(70)
    expect(new Set(await column(2))).toEqual(new Set(['robot']))

    // Action and release together; a reload keeps them, in the boxes too.
    const activated = release(21).manifest.release
    // Typed at once after "Clear filters", where it leaves the focus: nothing typed is lost to the URL's change.
    await filters.getByRole('button', { name: 'Clear filters', exact: true }).click()
    await page.keyboard.type('firmware.upload')
    await page.waitForURL((url) => url.search === '')
    expect(await filters.getByRole('textbox', { name: 'Actor', exact: true }).inputValue()).toBe('')
    await filters.getByRole('textbox', { name: 'Release', exact: true }).fill(activated)
    await page.keyboard.press('Enter')
    await page.waitForURL((url) => url.searchParams.get('action') === 'firmware.upload' && url.searchParams.get('release_id') === activated)
    await page.reload()
    expect(await filters.getByRole('textbox', { name: 'Release', exact: true }).inputValue()).toBe(activated)
    await expect.poll(() => column(3)).toEqual(['firmware.upload'])
    expect(await column(4)).toEqual([activated])
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'audit-filtered-en')
  })

  it('shows the releases and the filtered audit log in Chinese', async () => {
    await page.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    const filters = page.getByRole('search', { name: '筛选', exact: true })
    for (const name of ['动作', '操作者', '版本']) await filters.getByRole('textbox', { name, exact: true }).waitFor()
    await page.getByRole('table', { name: '审计日志', exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'audit-zh')
    await page.getByRole('link', { name: '固件', exact: true }).click()
    const table = page.getByRole('table', { name: '版本', exact: true })
    await table.waitFor()
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['大小', 'SHA-256']))
    await table.getByRole('button', { name: `复制 ${release(LARGE_BUILD).manifest.release} 的 SHA-256`, exact: true }).waitFor()
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'firmware-zh')
  })
})
