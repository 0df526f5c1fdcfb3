import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { parsePasswordHash, verifyPassword } from '../../src/auth/password-hash.js'
import { runHashPasswordCommand, type HashPasswordIo } from '../../src/cli/hash-password-command.js'

function io(options: { tty?: boolean } = {}) {
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown; rawModes: boolean[] }
  stdin.rawModes = []
  if (options.tty) {
    stdin.isTTY = true
    stdin.setRawMode = (raw: boolean) => stdin.rawModes.push(raw)
  }
  let out = ''
  let err = ''
  const streams: HashPasswordIo = { stdin, stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } }
  return { stdin, streams, out: () => out, err: () => err }
}

describe('fleetgate hash-password', () => {
  it('hashes the first line of standard input, without its newline', async () => {
    const t = io()
    const run = runHashPasswordCommand([], t.streams)
    t.stdin.end('s3cret pass\r\nsecond line\n')
    expect(await run).toBe(0)
    const printed = t.out()
    expect(printed).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+\n$/)
    const stored = parsePasswordHash(printed.trim())
    expect(await verifyPassword('s3cret pass', stored)).toBe(true)
    expect(await verifyPassword('s3cret pass\r', stored)).toBe(false)
    expect(t.err()).toBe('')
  })

  it('takes input without a final newline whole', async () => {
    const t = io()
    const run = runHashPasswordCommand([], t.streams)
    t.stdin.end('no-newline')
    expect(await run).toBe(0)
    expect(await verifyPassword('no-newline', parsePasswordHash(t.out().trim()))).toBe(true)
  })

  it.each([[''], ['\n'], ['\nsecond line\n']])('exits 2 with a message for the empty password %j', async (input) => {
    const t = io()
    const run = runHashPasswordCommand([], t.streams)
    t.stdin.end(input)
    expect(await run).toBe(2)
    expect(t.out()).toBe('')
    expect(t.err()).toMatch(/the password is empty/)
  })

  it('exits 2 for a password longer than a login accepts', async () => {
    const t = io()
    const run = runHashPasswordCommand([], t.streams)
    t.stdin.end('x'.repeat(129))
    expect(await run).toBe(2)
    expect(t.err()).toMatch(/longer than 128/)
  })

  it('asks on a terminal with echo off, honouring backspace', async () => {
    const t = io({ tty: true })
    const run = runHashPasswordCommand([], t.streams)
    t.stdin.write('tops')
    t.stdin.write('\u007fecret\r')
    expect(await run).toBe(0)
    expect(t.stdin.rawModes).toEqual([true, false])
    expect(t.err()).toBe('Password: \n')
    expect(await verifyPassword('topecret', parsePasswordHash(t.out().trim()))).toBe(true)
  })

  it('stops without printing on Ctrl-C at the prompt', async () => {
    const t = io({ tty: true })
    const run = runHashPasswordCommand([], t.streams)
    t.stdin.write('abc\u0003')
    expect(await run).toBe(130)
    expect(t.out()).toBe('')
    expect(t.stdin.rawModes).toEqual([true, false])
  })

  it('prints its usage for --help and refuses other arguments with exit 2', async () => {
    const help = io()
    expect(await runHashPasswordCommand(['--help'], help.streams)).toBe(0)
    expect(help.out()).toMatch(/usage: fleetgate hash-password/)
    const bad = io()
    expect(await runHashPasswordCommand(['pw'], bad.streams)).toBe(2)
    expect(bad.err()).toMatch(/unexpected argument pw/)
  })
})
