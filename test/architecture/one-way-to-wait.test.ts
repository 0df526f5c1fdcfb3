import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * The suite waits in one way: `expect.poll(read, { timeout, interval })` when there is only a value
 * to read again, or the awaited event itself (a socket's 'close', an emitter's event, a stream's
 * message). A hand-written polling loop is a loop that sleeps on a timer and ends on a condition:
 * its condition awaits something, or its body leaves it (return, break, throw). A loop that sleeps
 * only to pace what it sends (a load of writes, say) is not one.
 */
const TEST_DIR = fileURLToPath(new URL('../', import.meta.url))
const TIMER_NAMES = /^(sleep|delay|pause)$/

function testSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testSources(full)
    return /\.tsx?$/.test(entry.name) ? [full] : []
  })
}

const isFunction = (node: ts.Node) => ts.isFunctionLike(node) || ts.isClassLike(node)

/** Whether `node` (not counting nested functions) contains a node that `test` accepts. */
function contains(node: ts.Node, test: (n: ts.Node) => boolean): boolean {
  let found = false
  const visit = (n: ts.Node) => {
    if (found || isFunction(n)) return
    if (test(n)) found = true
    else ts.forEachChild(n, visit)
  }
  ts.forEachChild(node, visit)
  return found || test(node)
}

/** The names `node:timers/promises` is imported under (`setTimeout as sleep`, `setImmediate as tick`, …). */
function timerPromiseNames(file: ts.SourceFile): Set<string> {
  const names = new Set<string>()
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    if (!/^(node:)?timers\/promises$/.test(statement.moduleSpecifier.text)) continue
    const bindings = statement.importClause?.namedBindings
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text)
    if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text)
  }
  return names
}

/** `await new Promise((r) => setTimeout(r, …))`, `await sleep(…)`, `await tick()` from timers/promises. */
function isTimerWait(node: ts.Node, timerNames: Set<string>): boolean {
  if (!ts.isAwaitExpression(node)) return false
  const awaited = node.expression
  if (ts.isNewExpression(awaited) && ts.isIdentifier(awaited.expression) && awaited.expression.text === 'Promise') {
    let timer = false
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && /^set(Timeout|Immediate)$/.test(n.expression.text)) timer = true
      else ts.forEachChild(n, visit)
    }
    ts.forEachChild(awaited, visit)
    return timer
  }
  if (!ts.isCallExpression(awaited)) return false
  const callee = awaited.expression
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? callee.expression.text : ''
  return TIMER_NAMES.test(name) || timerNames.has(name)
}

const isExit = (n: ts.Node) => ts.isReturnStatement(n) || ts.isBreakStatement(n) || ts.isThrowStatement(n)

/** The polling loops of one file, as `file:line`. */
function pollingLoops(fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const timerNames = timerPromiseNames(file)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isIterationStatement(node, false)) {
      const condition = ts.isForStatement(node) ? node.condition : ts.isWhileStatement(node) || ts.isDoStatement(node) ? node.expression : undefined
      const sleeps = contains(node.statement, (n) => isTimerWait(n, timerNames))
      const endsOnCondition = (condition !== undefined && contains(condition, ts.isAwaitExpression)) || contains(node.statement, isExit)
      if (sleeps && endsOnCondition) found.push(`${fileName}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

describe('one way to wait in the tests', () => {
  it('no test file polls in a loop of its own (expect.poll or the awaited event instead)', () => {
    const loops = testSources(TEST_DIR).flatMap((file) => pollingLoops(path.relative(TEST_DIR, file), readFileSync(file, 'utf8')))
    expect(loops).toEqual([])
  })

  it('the check finds the loops the suite had, and leaves a loop that paces its writes alone', () => {
    const deadlineLoop = `async function eventually(read, done) {
      const deadline = Date.now() + 15_000
      for (;;) {
        const value = await read()
        if (done(value) || Date.now() > deadline) return value
        await new Promise((r) => setTimeout(r, 50))
      }
    }`
    const retryLoop = `for (let i = 0; ; i++) {
      try { return await connect() } catch (err) { if (i > 100) throw err; await new Promise((resolve) => setTimeout(resolve, 50)) }
    }`
    const awaitedCondition = `import { setImmediate as tick } from 'node:timers/promises'
    while ((await metric()) === before) { publish(); await tick() }`
    const pacedWrites = `for (let seq = 0; writing && seq < 900; seq++) {
      try { await write(seq) } catch { failures++ }
      await new Promise((resolve) => setTimeout(resolve, 10))
    }`
    expect(pollingLoops('a.ts', deadlineLoop)).toEqual(['a.ts:3'])
    expect(pollingLoops('b.ts', retryLoop)).toEqual(['b.ts:1'])
    expect(pollingLoops('c.ts', awaitedCondition)).toEqual(['c.ts:2'])
    expect(pollingLoops('d.ts', pacedWrites)).toEqual([])
  })
})
