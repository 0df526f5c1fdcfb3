import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SCREENSHOTS = path.resolve('test-results/screenshots')

/**
 * Whether the browser journeys can run. Without Chromium they are skipped on a developer
 * machine, but in CI (CI=true) a missing browser is a failure, never a silent skip.
 */
export function chromiumAvailable(): boolean {
  const present = existsSync(CHROMIUM)
  if (!present && process.env.CI) throw new Error(`Chromium is required in CI but ${CHROMIUM} is missing (.ci/run installs the chromium package)`)
  return present
}

/** Debian's Chromium, headless, with a fresh profile (playwright gives launch() a temporary user-data-dir). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  })
}

/** A fresh browser profile on the console; `options` adds e.g. a `timezoneId`. */
export async function newContext(browser: Browser, baseURL: string, locale = 'en-US', options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, locale, viewport: { width: 1280, height: 860 }, ...options })
  context.setDefaultTimeout(15_000)
  // Whatever the console's Content-Security-Policy refuses (Chromium says so on the console)
  // fails the journey when it closes its context: the policy must not break the console.
  const refused: string[] = []
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text())
  })
  const close = context.close.bind(context)
  context.close = async (...args) => {
    await close(...args)
    if (refused.length > 0) throw new Error(`the console's Content-Security-Policy refused:\n${refused.join('\n')}`)
  }
  return context
}

/** Saves a screenshot as test-results/screenshots/<name>.png, for people to look at: the full page, or with `fullPage: false` the viewport (for the docs). */
export async function screenshot(page: Page, name: string, { fullPage = true }: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage })
}

/** Signs in through the login page by role and accessible name. */
export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto('/login')
  await page.getByRole('textbox', { name: 'Username', exact: true }).fill(username)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor()
}
