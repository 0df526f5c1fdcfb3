import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'
import { signedReleases } from '../helpers/signed-releases.js'

const { rootPubkey, release } = signedReleases({ version: { major: 1, minor: 4, revision: 2 }, payload: (build) => Buffer.from(`controller build ${build} `.repeat(100)) })

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

  it('uploads two releases, activates one, and counts its downloads', async () => {
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
    await page.reload()
    await expect.poll(() => table.getByRole('row').filter({ hasText: '1.4.2-21' }).getByRole('cell').nth(3).textContent()).toBe('1')
    expect(describeViolations(await seriousViolations(page))).toBe('')
    await screenshot(page, 'firmware-en')
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
})
