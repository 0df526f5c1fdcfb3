import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFirmwareCommand } from '../../src/cli/firmware-command.js'
import { parseMcubootImage } from '../../src/firmware/mcuboot-image.js'

async function run(...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runFirmwareCommand(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  })
  return { code, stdout, stderr }
}

describe('fleetgate firmware keygen, sign and verify', () => {
  let dir: string
  const path = (name: string) => join(dir, name)
  const signArgs = () => [
    'sign', '--in', path('raw.bin'), '--version', '1.2.3+45', '--key', path('keys/signing.key.pem'), '--cert', path('keys/signer.cert'),
    '--out', path('system.bin'), '--manifest', path('manifest.json'), '--hw-version', '3', '--fw-version', '0x10', '--git-sha', 'a1b2c3d',
  ]
  const verifyArgs = (image = 'system.bin') => ['verify', '--image', path(image), '--manifest', path('manifest.json'), '--root', path('keys/root.pub.pem')]

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetgate-firmware-'))
    await writeFile(path('raw.bin'), Buffer.from('raw firmware '.repeat(100)))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it('generates the root and signing keys and the signer certificate, private keys readable by the owner only', async () => {
    const { code, stdout } = await run('keygen', '--out', path('keys'))
    expect(code).toBe(0)
    expect(stdout).toContain('root.pub.pem')
    expect(await readFile(path('keys/root.key.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/)
    expect(await readFile(path('keys/signing.pub.pem'), 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----/)
    expect((await readFile(path('keys/signer.cert')))[0]).toBe(0x30)
    expect((await stat(path('keys/signing.key.pem'))).mode & 0o077).toBe(0)
  })

  it('refuses to overwrite existing keys unless --force', async () => {
    const before = await readFile(path('keys/root.key.pem'), 'utf8')
    const refused = await run('keygen', '--out', path('keys'))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/refusing to overwrite .*root\.key\.pem \(use --force\)/)
    expect(await readFile(path('keys/root.key.pem'), 'utf8')).toBe(before)
    expect((await run('keygen', '--out', path('keys2'))).code).toBe(0)
    expect((await run('keygen', '--out', path('keys2'), '--force')).code).toBe(0)
  })

  it('signs a raw binary into an image and manifest that verify passes', async () => {
    const signed = await run(...signArgs(), '--timestamp', '2025-02-03T04:05:06Z', '--header-size', '0x200', '--pad-sig')
    expect(signed.stderr).toBe('')
    expect(signed.code).toBe(0)
    const manifest = JSON.parse(await readFile(path('manifest.json'), 'utf8'))
    const image = await readFile(path('system.bin'))
    expect(manifest).toMatchObject({
      release: '1.2.3-45',
      image_version: 45,
      display_version: '1.2.3+45',
      system: { offset: 0, length: image.length, crc32: expect.stringMatching(/^[0-9a-f]{8}$/) },
      product: { magic: 'fleetgate', hw_version: 3, fw_version: 16, git_sha: 'a1b2c3d', timestamp: '2025-02-03T04:05:06Z' },
    })
    const parsed = parseMcubootImage(image)
    expect(parsed.ok && parsed.image.header.headerSize).toBe(0x200)

    const verified = await run(...verifyArgs())
    expect(verified.code).toBe(0)
    expect(verified.stdout.match(/^ok {4}/gm)).toHaveLength(12)
    expect(verified.stdout).toContain('is a valid release')
  })

  it('stamps the current UTC time when no --timestamp is given', async () => {
    expect((await run(...signArgs(), '--release', 'slave_1.2.3', '--magic', 'PNP')).code).toBe(0)
    const manifest = JSON.parse(await readFile(path('manifest.json'), 'utf8'))
    expect(manifest.release).toBe('slave_1.2.3')
    expect(Math.abs(Date.parse(manifest.product.timestamp) - Date.now())).toBeLessThan(60_000)
    expect((await run(...verifyArgs())).code).toBe(0)
  })

  it('fails verify on a tampered image, printing each failing check', async () => {
    const image = await readFile(path('system.bin'))
    image[image.length >> 1] ^= 0x40
    await writeFile(path('tampered.bin'), image)
    const { code, stdout } = await run(...verifyArgs('tampered.bin'))
    expect(code).toBe(1)
    expect(stdout).toMatch(/^FAIL {2}system\.sha256 equals the SHA-256 of the file: /m)
    expect(stdout).toMatch(/^FAIL {2}ECDSA_SIG verifies with PUBKEY: /m)
    expect(stdout).toMatch(/REJECTED \(\d+ problems\)/)
  })

  it('fails verify against another root key', async () => {
    const { code, stdout } = await run('verify', '--image', path('system.bin'), '--manifest', path('manifest.json'), '--root', path('keys2/root.pub.pem'))
    expect(code).toBe(1)
    expect(stdout).toMatch(/^FAIL {2}SIGNER_CERT .*not certified by FIRMWARE_ROOT_PUBKEY$/m)
  })

  it.each([
    [[], /missing subcommand/],
    [['frobnicate'], /unknown subcommand "frobnicate"/],
    [['keygen'], /missing --out/],
    [['sign', '--in', 'x'], /missing --version, --key, --cert, --out, --manifest, --hw-version, --fw-version, --git-sha/],
    [['verify', '--image', 'a', '--manifest', 'b', '--root', 'c', '--bogus'], /Unknown option '--bogus'/],
  ])('exits 2 with one line for the usage error %j', async (argv, message) => {
    const { code, stderr } = await run(...argv)
    expect(code).toBe(2)
    expect(stderr).toMatch(message)
    expect(stderr.trim().split('\n')).toHaveLength(1)
  })

  it('exits 2 on a malformed --version or number', async () => {
    const badVersion = await run(...signArgs().map((arg) => (arg === '1.2.3+45' ? '1.2.300+x' : arg)))
    expect(badVersion).toMatchObject({ code: 2, stderr: expect.stringContaining('--version must look like 1.2.3+45') })
    const badNumber = await run(...signArgs(), '--header-size', '16')
    expect(badNumber).toMatchObject({ code: 2, stderr: expect.stringContaining('--header-size must be at least 32') })
    const badTimestamp = await run(...signArgs(), '--timestamp', 'yesterday')
    expect(badTimestamp).toMatchObject({ code: 2, stderr: expect.stringContaining('manifest.product.timestamp must be an ISO 8601 UTC') })
  })

  it('exits 1 when an input file is missing or the key is not a P-256 key', async () => {
    const missing = await run('verify', '--image', path('nope.bin'), '--manifest', path('manifest.json'), '--root', path('keys/root.pub.pem'))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('ENOENT')
    const wrongKey = await run(...signArgs().map((arg) => (arg.endsWith('signing.key.pem') ? path('keys/root.pub.pem') : arg)))
    expect(wrongKey.code).toBe(1)
    expect(wrongKey.stderr).toContain('root.pub.pem')
  })

  it('prints usage with --help', async () => {
    const { code, stdout } = await run('sign', '--help')
    expect(code).toBe(0)
    expect(stdout).toContain('usage: fleetgate firmware keygen')
  })
})
