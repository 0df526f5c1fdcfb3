import type { KeyObject } from 'node:crypto'
import { access, chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  generateFirmwareKeys,
  privateKeyPem,
  publicKeyPem,
  readPrivateKeyPem,
  readPublicKeyPem,
} from '../firmware/firmware-keys.js'
import { formatImageVersion, parseImageVersion } from '../firmware/image-version.js'
import { checkManifestShape } from '../firmware/manifest-schema.js'
import { RELEASE_CHECKS } from '../firmware/release-checks.js'
import { signImage } from '../firmware/sign-image.js'
import { verifyRelease } from '../firmware/verify-release.js'

export interface CommandIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

const USAGE = `usage: fleetgate firmware keygen --out DIR [--force]
       fleetgate firmware sign --in RAW --version MAJOR.MINOR.REVISION+BUILD --key signing.key.pem --cert signer.cert
                               --out system.bin --manifest manifest.json --hw-version N --fw-version N --git-sha SHA
                               [--magic S] [--release ID] [--display-version S] [--timestamp ISO-8601-UTC]
                               [--load-addr N] [--header-size N] [--pad-sig]
       fleetgate firmware verify --image system.bin --manifest manifest.json --root root.pub.pem
`

const KEY_FILES = {
  rootPrivate: 'root.key.pem',
  rootPublic: 'root.pub.pem',
  signingPrivate: 'signing.key.pem',
  signingPublic: 'signing.pub.pem',
  signerCert: 'signer.cert',
} as const

/** A mistake in the command line: exit code 2. */
class UsageError extends Error {}

const isParseArgsError = (err: unknown): err is Error =>
  err instanceof Error && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')

function requireOptions<T extends Record<string, unknown>, K extends keyof T & string>(values: T, names: K[]): T & Record<K, string> {
  const missing = names.filter((name) => typeof values[name] !== 'string')
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((name) => `--${name}`).join(', ')}`)
  return values as T & Record<K, string>
}

/** Decimal or 0x-prefixed hex, within 0..max. */
function parseCount(text: string | undefined, option: string, max: number): number | undefined {
  if (text === undefined) return undefined
  const value = /^(0x[0-9a-f]+|\d+)$/i.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(value) || value > max) throw new UsageError(`--${option} must be an integer from 0 to ${max}, got ${JSON.stringify(text)}`)
  return value
}

function readKey(path: string, pem: Buffer, read: (pem: Buffer) => KeyObject): KeyObject {
  try {
    return read(pem)
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`)
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

async function keygen(args: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' }, force: { type: 'boolean' } }, strict: true })
  const { out, force } = requireOptions(values, ['out'])
  const paths = Object.fromEntries(Object.entries(KEY_FILES).map(([name, file]) => [name, join(out, file)])) as Record<keyof typeof KEY_FILES, string>
  if (!force) {
    for (const path of Object.values(paths)) {
      if (await exists(path)) throw new Error(`refusing to overwrite ${path} (use --force)`)
    }
  }
  await mkdir(out, { recursive: true })
  const keys = generateFirmwareKeys()
  const flag = force ? 'w' : 'wx'
  await writeFile(paths.rootPrivate, privateKeyPem(keys.root.privateKey), { mode: 0o600, flag })
  await writeFile(paths.rootPublic, publicKeyPem(keys.root.publicKey), { flag })
  await writeFile(paths.signingPrivate, privateKeyPem(keys.signing.privateKey), { mode: 0o600, flag })
  await writeFile(paths.signingPublic, publicKeyPem(keys.signing.publicKey), { flag })
  await writeFile(paths.signerCert, keys.signerCert, { flag })
  // `mode` only applies to new files; an overwritten key keeps its old permissions otherwise.
  await Promise.all([chmod(paths.rootPrivate, 0o600), chmod(paths.signingPrivate, 0o600)])
  io.stdout.write(
    `wrote ${Object.values(paths).join(', ')}\n` +
      `the server trusts FIRMWARE_ROOT_PUBKEY=${paths.rootPublic}; keep ${KEY_FILES.rootPrivate} offline\n`,
  )
  return 0
}

const SIGN_OPTIONS = {
  in: { type: 'string' },
  version: { type: 'string' },
  key: { type: 'string' },
  cert: { type: 'string' },
  out: { type: 'string' },
  manifest: { type: 'string' },
  'hw-version': { type: 'string' },
  'fw-version': { type: 'string' },
  'git-sha': { type: 'string' },
  magic: { type: 'string', default: 'fleetgate' },
  release: { type: 'string' },
  'display-version': { type: 'string' },
  timestamp: { type: 'string' },
  'load-addr': { type: 'string' },
  'header-size': { type: 'string' },
  'pad-sig': { type: 'boolean' },
} as const

async function signCommand(args: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({ args, options: SIGN_OPTIONS, strict: true })
  const required = ['in', 'version', 'key', 'cert', 'out', 'manifest', 'hw-version', 'fw-version', 'git-sha'] as const
  const options = requireOptions(values, [...required])
  const version = parseImageVersion(options.version)
  if (!version) throw new UsageError(`--version must look like 1.2.3+45 (major ≤ 255, minor ≤ 255, revision ≤ 65535), got ${JSON.stringify(options.version)}`)
  const product = {
    magic: options.magic,
    hw_version: parseCount(options['hw-version'], 'hw-version', Number.MAX_SAFE_INTEGER)!,
    fw_version: parseCount(options['fw-version'], 'fw-version', Number.MAX_SAFE_INTEGER)!,
    git_sha: options['git-sha'],
    timestamp: options.timestamp ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  }
  const loadAddr = parseCount(options['load-addr'], 'load-addr', 0xffff_ffff)
  const headerSize = parseCount(options['header-size'], 'header-size', 0xffff)
  if (headerSize !== undefined && headerSize < 32) throw new UsageError('--header-size must be at least 32')

  const [payload, keyPem, signerCert] = await Promise.all([readFile(options.in), readFile(options.key), readFile(options.cert)])
  const signingKey = readKey(options.key, keyPem, readPrivateKeyPem)
  const { image, manifest } = signImage({
    payload,
    version,
    product,
    signingKey,
    signerCert,
    loadAddr,
    headerSize,
    release: options.release,
    displayVersion: options['display-version'],
    padSignature: options['pad-sig'],
  })
  const problems = checkManifestShape(manifest)
  if (problems.length > 0) throw new UsageError(problems.join('; '))

  await writeFile(options.out, image)
  await writeFile(options.manifest, `${JSON.stringify(manifest, null, 2)}\n`)
  io.stdout.write(
    `signed ${options.out}: ${image.length} bytes, version ${formatImageVersion(version)}, release ${manifest.release}, ` +
      `sha256 ${manifest.system.sha256}\nwrote ${options.manifest}\n`,
  )
  return 0
}

async function verifyCommand(args: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { image: { type: 'string' }, manifest: { type: 'string' }, root: { type: 'string' } },
    strict: true,
  })
  const options = requireOptions(values, ['image', 'manifest', 'root'])
  const [image, manifestText, rootPem] = await Promise.all([readFile(options.image), readFile(options.manifest, 'utf8'), readFile(options.root)])
  const rootKey = readKey(options.root, rootPem, readPublicKeyPem)
  let manifest: unknown
  try {
    manifest = JSON.parse(manifestText)
  } catch {
    io.stdout.write(`FAIL  ${RELEASE_CHECKS.manifest}: ${options.manifest} is not valid JSON\n`)
    return 1
  }
  const result = verifyRelease(image, manifest, rootKey)
  for (const check of result.checks) {
    const label = RELEASE_CHECKS[check.name]
    if (check.status === 'ok') io.stdout.write(`ok    ${label}\n`)
    else if (check.status === 'skipped') io.stdout.write(`skip  ${label} (${check.note})\n`)
    else for (const reason of check.reasons) io.stdout.write(`FAIL  ${label}: ${reason}\n`)
  }
  const count = result.reasons.length
  io.stdout.write(result.ok ? `${options.image} is a valid release\n` : `${options.image} is REJECTED (${count} ${count === 1 ? 'problem' : 'problems'})\n`)
  return result.ok ? 0 : 1
}

/**
 * `fleetgate firmware keygen | sign | verify` (contract §6, §9). Returns the exit code:
 * 0 success, 1 failure (a rejected image, an unreadable file), 2 a usage error.
 */
export async function runFirmwareCommand(argv: string[], io: CommandIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const [subcommand, ...args] = argv
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(USAGE)
    return 0
  }
  try {
    switch (subcommand) {
      case 'keygen':
        return await keygen(args, io)
      case 'sign':
        return await signCommand(args, io)
      case 'verify':
        return await verifyCommand(args, io)
      case '-h':
      case '--help':
        io.stdout.write(USAGE)
        return 0
      case undefined:
        throw new UsageError('missing subcommand: keygen, sign or verify')
      default:
        throw new UsageError(`unknown subcommand ${JSON.stringify(subcommand)}: expected keygen, sign or verify`)
    }
  } catch (err) {
    const where = subcommand && ['keygen', 'sign', 'verify'].includes(subcommand) ? `fleetgate firmware ${subcommand}` : 'fleetgate firmware'
    if (err instanceof UsageError || isParseArgsError(err)) {
      io.stderr.write(`${where}: ${err.message} (fleetgate firmware --help for usage)\n`)
      return 2
    }
    io.stderr.write(`${where}: ${(err as Error).message}\n`)
    return 1
  }
}
