import path from 'node:path'
import type { Reporter, TestCase } from 'vitest/node'
import { ALLOWED_SKIPS } from './allowed-skips.js'

/**
 * Under CI=true, fails the run when a test was skipped that `ALLOWED_SKIPS` does not list, and
 * names each (a skipped suite reads as green otherwise). Outside CI it only lists them.
 */
export default class SkipGuardReporter implements Reporter {
  private readonly unlisted: string[] = []

  onTestCaseResult(testCase: TestCase): void {
    if (testCase.result().state !== 'skipped') return
    const file = path.relative(process.cwd(), testCase.module.moduleId)
    const allowed = ALLOWED_SKIPS.some((skip) => skip.file === file && skip.test.test(testCase.fullName))
    if (!allowed) this.unlisted.push(`${file} > ${testCase.fullName}`)
  }

  onTestRunEnd(): void {
    if (this.unlisted.length === 0) return
    const list = this.unlisted.map((name) => `  - ${name}`).join('\n')
    if (process.env.CI !== 'true') {
      console.warn(`\n${this.unlisted.length} test(s) skipped (fine outside CI; CI fails on them unless test/helpers/allowed-skips.ts lists them):\n${list}\n`)
      return
    }
    console.error(`\nSKIP GUARD: ${this.unlisted.length} test(s) skipped in CI that test/helpers/allowed-skips.ts does not list:\n${list}\n`)
    process.exitCode = 1
  }
}
