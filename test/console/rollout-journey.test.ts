import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeViolations, seriousViolations } from './harness/axe.js'
import { chromiumAvailable, launchChromium, newContext, screenshot, signIn } from './harness/browser.js'
import { startConsoleServer, type ConsoleServer } from './harness/console-server.js'
import { signedReleases } from '../helpers/signed-releases.js'
import { loginAs } from '../helpers/test-app.js'

const { rootPubkey, release } = signedReleases({ version: { major: 1, minor: 4, revision: 2 }, payload: (build) => Buffer.from(`controller build ${build} `.repeat(100)) })
const FIRST = release(31)
const SECOND = release(32)
/** What the console shows of each: its display version (1.4.2+31). */
const V1 = FIRST.manifest.display_version
const V2 = SECOND.manifest.display_version
/** The simulated machine kept busy placing parts: no offer may reach it while its task runs (§14). */
const BUSY = 2
const BUSY_ID = 'pnp-03'

describe.skipIf(!chromiumAvailable())('console: staged firmware rollouts', () => {
  let server: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let dir: string
  const simLog: string[] = []
  let firstRolloutId = ''

  const checkAxe = async (where: string, on: Page = page) => expect(describeViolations(await seriousViolations(on)), `axe on ${where}`).toBe('')
  const upload = async (r: typeof FIRST) => {
    const imagePath = path.join(dir, `${r.manifest.release}.bin`)
    const manifestPath = path.join(dir, `${r.manifest.release}.json`)
    writeFileSync(imagePath, r.image)
    writeFileSync(manifestPath, JSON.stringify(r.manifest))
    await page.getByLabel('Firmware image', { exact: true }).setInputFiles(imagePath)
    await page.getByLabel('Manifest', { exact: true }).setInputFiles(manifestPath)
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    await page.getByRole('status').filter({ hasText: r.manifest.release }).waitFor()
  }
  /** Starts a long task on a simulated machine (a minute per part). */
  const keepBusy = (index: number) => {
    const { machine } = server.sim.machines[index]!
    machine.settings.set('place_ms_per_item', 60_000)
    const order = machine.orders.create('long board', Array.from({ length: 20 }, (_, i) => ({ component: 'R1', x: 10 + i, y: 10, angle: 0 })), {})
    machine.tasks.start(order.id)
  }
  /** Opens "Start rollout", fills it in, presses Start, and returns the dialog (now asking). */
  const reviewRollout = async (r: typeof FIRST, stages: string) => {
    await page.getByRole('button', { name: 'Start rollout', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Start rollout', exact: true })
    await dialog.getByRole('combobox', { name: 'Release', exact: true }).selectOption(r.manifest.release)
    await dialog.getByRole('textbox', { name: 'Stages', exact: true }).fill(stages)
    await dialog.getByRole('button', { name: 'Start', exact: true }).click()
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).waitFor()
    return dialog
  }
  const rolloutIdInUrl = () => decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  const progress = () => page.getByRole('progressbar', { name: 'Rollout progress', exact: true })
  const machinesTable = () => page.getByRole('table', { name: 'Rollout machines', exact: true })
  const machineState = (id: string) =>
    machinesTable().getByRole('row').filter({ has: page.getByRole('link', { name: id, exact: true }) }).getByRole('cell').nth(2).textContent()
  const rolloutRow = (version: string) =>
    page.getByRole('table', { name: 'Rollouts', exact: true }).getByRole('row').filter({ has: page.getByRole('link', { name: version, exact: true }) })
  const actionsEnabled = async () =>
    Promise.all(['Pause', 'Resume', 'Abort'].map(async (name) => !(await page.getByRole('button', { name, exact: true }).isDisabled())))

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'console-rollout-'))
    server = await startConsoleServer({
      machines: 3,
      env: { FIRMWARE_ROOT_PUBKEY: rootPubkey },
      sim: { log: (level, message) => void simLog.push(`${level} ${message}`) },
    })
    browser = await launchChromium()
    context = await newContext(browser, server.url)
    page = await context.newPage()
  })
  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('checks the stages, says what will happen, and starts a rollout only after Confirm', async () => {
    await signIn(page, 'root', 'root-password')
    await page.getByRole('link', { name: 'Firmware', exact: true }).click()
    await page.getByRole('table', { name: 'Rollouts', exact: true }).waitFor()
    await upload(FIRST)
    await upload(SECOND)
    keepBusy(BUSY)

    await page.getByRole('button', { name: 'Start rollout', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Start rollout', exact: true })
    const stages = dialog.getByRole('textbox', { name: 'Stages', exact: true })
    expect(await stages.inputValue()).toBe('10, 100')
    expect(await dialog.getByRole('textbox', { name: 'Max failure ratio', exact: true }).inputValue()).toBe('0.1')
    await dialog.getByRole('combobox', { name: 'Release', exact: true }).selectOption(FIRST.manifest.release)
    await checkAxe('the Start rollout dialog')
    await screenshot(page, 'rollout-dialog-en')

    await stages.fill('50, 10, 100')
    await dialog.getByRole('button', { name: 'Start', exact: true }).click()
    expect(await dialog.getByRole('alert').textContent()).toBe('Stages must rise: 10 comes after 50.')
    expect(await dialog.getByRole('button', { name: 'Confirm', exact: true }).count()).toBe(0)

    await stages.fill('50, 100')
    await dialog.getByRole('button', { name: 'Start', exact: true }).click()
    await expect.poll(() => dialog.textContent()).toContain(`Release ${V1} (${FIRST.manifest.release}) will be offered to every known machine in 2 stages: 50% → 100%.`)
    const rolloutsBefore = (await fetchRollouts()).length
    expect(rolloutsBefore).toBe(0)
    await checkAxe('the rollout confirmation')
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).click()
    await page.waitForURL(/\/firmware\/rollouts\/[^/]+$/)
    firstRolloutId = rolloutIdInUrl()
    await page.getByRole('heading', { name: firstRolloutId, exact: true, level: 1 }).waitFor()
    expect(await page.getByRole('dialog').count()).toBe(0)
  })

  it('shows the machines move live, never offers to the busy machine, and pauses and resumes', async () => {
    await expect.poll(() => progress().getAttribute('aria-valuemax')).toBe('3')
    await expect.poll(async () => (await machinesTable().getByRole('link').allTextContents()).sort()).toEqual(['pnp-01', 'pnp-02', 'pnp-03'])
    // A machine of the first stage that is not placing parts is offered the release, live.
    const others = ['pnp-01', 'pnp-02']
    await expect
      .poll(async () => (await Promise.all(others.map(machineState))).some((s) => ['Offered', 'Downloading', 'Installing', 'Installed'].includes(s ?? '')), { timeout: 15_000 })
      .toBe(true)
    expect(['Pending', 'Waiting']).toContain(await machineState(BUSY_ID))
    expect(await actionsEnabled()).toEqual([true, false, true])
    await checkAxe('the rollout page')
    await screenshot(page, 'rollout-en')
    // The viewport only: the picture docs/console-rollout.png is copied from.
    await screenshot(page, 'rollout-viewport-en', { fullPage: false })

    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await expect.poll(() => page.getByRole('main').textContent()).toContain('State: Paused')
    expect(await actionsEnabled()).toEqual([false, true, true])
    await page.getByRole('button', { name: 'Resume', exact: true }).click()
    await expect.poll(() => page.getByRole('main').textContent()).toContain('State: Running')
    expect(await actionsEnabled()).toEqual([true, false, true])
    expect(['Pending', 'Waiting']).toContain(await machineState(BUSY_ID))
  })

  it('refuses a second rollout while one runs with the server’s message, and aborts only after Confirm', async () => {
    await page.getByRole('link', { name: 'Back to firmware', exact: true }).click()
    await expect.poll(() => rolloutRow(V1).getByRole('cell').nth(1).textContent()).toBe('Running')
    expect(await rolloutRow(V1).getByRole('cell').nth(2).textContent()).toMatch(/^\d of 2 \((50|100)%\)$/)
    await checkAxe('the firmware page with a rollout')
    await screenshot(page, 'firmware-rollouts-en')

    const dialog = await reviewRollout(SECOND, '10, 100')
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).click()
    expect(await dialog.getByRole('alert').textContent()).toBe('Another rollout is running or paused: finish or abort it first')
    await checkAxe('the Start rollout dialog refused')
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click()
    expect(await page.getByRole('dialog').count()).toBe(0)

    await rolloutRow(V1).getByRole('link', { name: V1, exact: true }).click()
    await page.getByRole('heading', { name: firstRolloutId, exact: true }).waitFor()
    await page.getByRole('button', { name: 'Abort', exact: true }).click()
    const ask = page.getByRole('dialog', { name: 'Abort', exact: true })
    expect(await ask.textContent()).toContain(`Abort rollout ${firstRolloutId}?`)
    await ask.getByRole('button', { name: 'Cancel', exact: true }).click()
    expect(await page.getByRole('main').textContent()).toContain('State: Running')
    await page.getByRole('button', { name: 'Abort', exact: true }).click()
    await ask.getByRole('button', { name: 'Confirm', exact: true }).click()
    await expect.poll(() => page.getByRole('main').textContent()).toContain('State: Aborted')
    expect(await actionsEnabled()).toEqual([false, false, false])
    expect((await fetchRollouts())[0]).toMatchObject({ rollout_id: firstRolloutId, state: 'aborted' })
  })

  it('names everything in Chinese on the firmware page, the dialog and the rollout page, and passes axe', async () => {
    const zh = await newContext(browser, server.url)
    const p = await zh.newPage()
    await signIn(p, 'root', 'root-password')
    await p.getByLabel('Language', { exact: true }).selectOption('zh-CN')
    await p.getByRole('link', { name: '固件', exact: true }).click()
    const table = p.getByRole('table', { name: '分阶段升级', exact: true })
    await table.getByRole('link', { name: V1, exact: true }).waitFor()
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['版本', '状态', '阶段', '进度']))
    await checkAxe('the firmware page in Chinese', p)
    await screenshot(p, 'firmware-rollouts-zh')

    await p.getByRole('button', { name: '开始分阶段升级', exact: true }).click()
    const dialog = p.getByRole('dialog', { name: '开始分阶段升级', exact: true })
    await dialog.getByRole('combobox', { name: '升级版本', exact: true }).waitFor()
    await dialog.getByRole('textbox', { name: '阶段', exact: true }).fill('10, 5, 100')
    await dialog.getByRole('textbox', { name: '最大失败比例', exact: true }).waitFor()
    await dialog.getByRole('button', { name: '开始', exact: true }).click()
    expect(await dialog.getByRole('alert').textContent()).toBe('阶段必须逐级上升：5 排在 10 之后。')
    await checkAxe('the Start rollout dialog in Chinese', p)
    await screenshot(p, 'rollout-dialog-zh')
    await dialog.getByRole('button', { name: '取消', exact: true }).click()

    await table.getByRole('link', { name: V1, exact: true }).click()
    await p.getByRole('heading', { name: firstRolloutId, exact: true }).waitFor()
    await p.getByRole('progressbar', { name: '升级进度', exact: true }).waitFor()
    await p.getByRole('table', { name: '升级机器', exact: true }).waitFor()
    for (const name of ['暂停', '继续', '中止']) expect(await p.getByRole('button', { name, exact: true }).isDisabled()).toBe(true)
    expect(await p.getByRole('main').textContent()).toContain('已中止')
    await checkAxe('the rollout page in Chinese', p)
    await screenshot(p, 'rollout-zh')
    await zh.close()
  })

  it('delivers a release stage by stage, waits for the busy machine’s task to end, and reaches completed live', { timeout: 120_000 }, async () => {
    await page.getByRole('link', { name: 'Back to firmware', exact: true }).click()
    const dialog = await reviewRollout(SECOND, '50, 100')
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).click()
    await page.waitForURL(/\/firmware\/rollouts\/[^/]+$/)
    const id = rolloutIdInUrl()
    expect(id).not.toBe(firstRolloutId)

    // The machines free to update install it; the one placing parts waits.
    await expect.poll(async () => Number(await progress().getAttribute('aria-valuenow')), { timeout: 60_000 }).toBeGreaterThanOrEqual(1)
    await expect.poll(() => machineState(BUSY_ID), { timeout: 30_000 }).toBe('Waiting')
    expect(await page.getByRole('main').textContent()).toContain('State: Running')
    await screenshot(page, 'rollout-waiting-en')

    // On the firmware page, the table follows the rollout to completed without a reload.
    await page.getByRole('link', { name: 'Back to firmware', exact: true }).click()
    const row = rolloutRow(V2)
    await expect.poll(() => row.getByRole('cell').nth(1).textContent()).toBe('Running')
    const navigations: string[] = []
    page.on('framenavigated', (frame) => navigations.push(frame.url()))
    server.sim.machines[BUSY]!.machine.tasks.stop()
    await expect.poll(() => row.getByRole('cell').nth(1).textContent(), { timeout: 60_000 }).toBe('Completed')
    expect(await row.getByRole('cell').nth(3).textContent()).toContain('3 of 3 installed')
    // Its release is the active one now (§14), and the releases table says so.
    const releases = page.getByRole('table', { name: 'Releases', exact: true })
    await expect.poll(() => releases.getByRole('row').filter({ hasText: SECOND.manifest.release }).getByRole('cell').nth(2).textContent()).toBe('Yes')
    expect(navigations).toEqual([])

    await row.getByRole('link', { name: V2, exact: true }).click()
    await page.getByRole('heading', { name: id, exact: true }).waitFor()
    await expect.poll(() => progress().getAttribute('aria-valuenow')).toBe('3')
    expect(await page.getByRole('main').textContent()).toContain('State: Completed')
    expect(await actionsEnabled()).toEqual([false, false, false])
    for (const machine of ['pnp-01', 'pnp-02', 'pnp-03']) expect(await machineState(machine)).toBe('Installed')
    await checkAxe('the completed rollout page')
    await screenshot(page, 'rollout-completed-en')
  })

  /** The rollouts as the API lists them (newest first). */
  async function fetchRollouts(): Promise<{ rollout_id: string; state: string }[]> {
    const authorization = await loginAs(server.test.app, 'root')
    const res = await server.test.app.inject({ url: '/api/v1/admin/firmware/slave/rollouts', headers: { authorization } })
    return (res.json() as { rollouts: { rollout_id: string; state: string }[] }).rollouts
  }
})
