import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { generateFirmwareKeys, readPublicKeyPem } from '../../src/firmware/firmware-keys.js'
import { parseMcubootImage } from '../../src/firmware/mcuboot-image.js'
import { signImage } from '../../src/firmware/sign-image.js'
import { verifyRelease } from '../../src/firmware/verify-release.js'
import { buildHandImage, makeHandKeys, withSystemOf } from './hand-built-image.js'

/** mulberry32: a small deterministic PRNG, so a failing case can be replayed by its index. */
function prng(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (max: number) => Math.floor(next() * max)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]
  const bytes = (length: number) => Buffer.from(Array.from({ length }, () => int(256)))
  return { int, pick, bytes }
}

const fixtures = new URL('./fixtures/', import.meta.url)
const cliKeys = generateFirmwareKeys()
const handKeys = makeHandKeys()
const product = { magic: 'FUZZ', hw_version: 1, fw_version: 1, git_sha: 'f00d', timestamp: '2025-01-01T00:00:00Z' }

// No unknown TLVs in the unprotected areas: there, a changed byte could legitimately pass.
const bases = [
  {
    ...signImage({
      payload: Buffer.from('fuzz payload '.repeat(30)),
      version: { major: 3, minor: 1, revision: 4, build_num: 15 },
      product,
      signingKey: cliKeys.signing.privateKey,
      signerCert: cliKeys.signerCert,
      padSignature: true,
    }),
    root: cliKeys.root.publicKey,
  },
  {
    ...buildHandImage({
      keys: handKeys,
      headerSize: 0x80,
      headerFill: 0xff,
      protectedTlvs: ['product', { type: 0x50, value: Buffer.from([1, 0, 0, 0]) }],
      unprotectedTlvs: ['pubkey', 'cert', 'sig', 'sha256'],
      padSignatures: true,
    }),
    root: handKeys.rootPublic,
  },
  {
    image: readFileSync(new URL('imgtool-system.bin', fixtures)),
    manifest: JSON.parse(readFileSync(new URL('imgtool-manifest.json', fixtures), 'utf8')) as Record<string, unknown>,
    root: readPublicKeyPem(readFileSync(new URL('test-only-root.pub.pem', fixtures))),
  },
]

const INTERESTING_U16 = [0, 1, 3, 4, 5, 31, 32, 33, 0x6907, 0x6908, 0x7fff, 0x8000, 0xfffe, 0xffff]
const INTERESTING_U32 = [0, 1, 32, 0x96f3b83d, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]

type Rng = ReturnType<typeof prng>

/** Offsets where lengths live: header fields, TLV infos and TLV headers. */
function structuralOffsets(image: Buffer): number[] {
  const parsed = parseMcubootImage(image)
  if (!parsed.ok) throw new Error(parsed.reason)
  const { protectedArea, unprotectedArea, protectedTlvs, unprotectedTlvs } = parsed.image
  return [8, 10, 12, protectedArea.start, protectedArea.start + 2, unprotectedArea.start, unprotectedArea.start + 2,
    ...[...protectedTlvs, ...unprotectedTlvs].flatMap((tlv) => [tlv.offset, tlv.offset + 2])]
}

function mutate(rng: Rng, image: Buffer, offsets: number[]): Buffer {
  const copy = Buffer.from(image)
  switch (rng.int(9)) {
    case 0:
      for (let n = 1 + rng.int(4); n > 0; n--) copy[rng.int(copy.length)] ^= 1 + rng.int(255)
      return copy
    case 1:
      return copy.subarray(0, rng.int(copy.length))
    case 2:
      return Buffer.concat([copy, rng.bytes(1 + rng.int(16))])
    case 3: {
      const offset = rng.pick(offsets)
      copy.writeUInt16LE(rng.int(2) ? rng.pick(INTERESTING_U16) : rng.int(0x10000), offset)
      return copy
    }
    case 4: {
      const offset = rng.pick([0, 4, 12, 16, 20, 24, 28])
      copy.writeUInt32LE(rng.int(2) ? rng.pick(INTERESTING_U32) : (copy.length + rng.int(9) - 4) >>> 0, offset)
      return copy
    }
    case 5: {
      const start = rng.int(copy.length)
      return Buffer.concat([copy.subarray(0, start), copy.subarray(Math.min(copy.length, start + 1 + rng.int(40)))])
    }
    case 6: {
      const at = rng.int(copy.length + 1)
      return Buffer.concat([copy.subarray(0, at), rng.bytes(1 + rng.int(8)), copy.subarray(at)])
    }
    case 7: {
      const random = rng.bytes(rng.int(400))
      if (random.length >= 4 && rng.int(2)) random.writeUInt32LE(0x96f3b83d, 0)
      return random
    }
    default: {
      // Swap two equal-length slices: structure stays plausible, content does not.
      const length = 1 + rng.int(8)
      const a = rng.int(copy.length - length)
      const b = rng.int(copy.length - length)
      const first = Buffer.from(copy.subarray(a, a + length))
      copy.copy(copy, a, b, b + length)
      first.copy(copy, b)
      return copy
    }
  }
}

// No value here is a valid release id, and system.offset (unchecked by §6) is never touched.
const RANDOM_VALUES: unknown[] = [null, 0, -1, 1.5, 2 ** 53, '', 'a/b', '..', {}, [], true, '0x', 'g'.repeat(65), { nested: [1, { a: null }] }]

function mutateManifest(rng: Rng, manifest: Record<string, unknown>): unknown {
  const copy = structuredClone(manifest)
  const paths = [['release'], ['image_version'], ['display_version'], ['system'], ['system', 'length'],
    ['system', 'sha256'], ['system', 'crc32'], ['product'], ['product', 'magic'], ['product', 'hw_version'], ['product', 'timestamp']]
  const path = rng.pick(paths)
  const parent = path.length === 1 ? copy : (copy[path[0]] as Record<string, unknown>)
  if (rng.int(4) === 0) delete parent[path[path.length - 1]]
  else parent[path[path.length - 1]] = rng.pick(RANDOM_VALUES)
  return rng.int(20) === 0 ? rng.pick(RANDOM_VALUES) : copy
}

describe('verifyRelease under fuzzing', () => {
  it('never throws and rejects every one of 3000 random and mutated images', () => {
    const rng = prng(0x5eed)
    const offsets = bases.map((base) => structuralOffsets(base.image))
    for (const base of bases) expect(verifyRelease(base.image, base.manifest, base.root).reasons).toEqual([])

    let accepted = 0
    const failedChecks = new Set<string>()
    for (let i = 0; i < 3000; i++) {
      const which = rng.int(bases.length)
      const base = bases[which]
      const manifestOnly = rng.int(10) === 0
      const image = manifestOnly ? base.image : mutate(rng, base.image, offsets[which])
      const unchanged = image.equals(base.image)
      // Half the time the manifest matches the mutated bytes, so the image checks are what must catch it.
      const manifest = manifestOnly ? mutateManifest(rng, base.manifest) : rng.int(2) ? withSystemOf(base.manifest, image) : base.manifest

      const parsed = parseMcubootImage(image)
      expect(typeof parsed.ok, `case ${i}`).toBe('boolean')
      const result = verifyRelease(image, manifest, base.root)
      const manifestUnchanged = JSON.stringify(manifest) === JSON.stringify(base.manifest)
      if (unchanged && manifestUnchanged) {
        expect(result.ok, `case ${i}`).toBe(true)
        accepted++
      } else {
        expect(result.ok, `case ${i}: ${result.reasons.join('; ')}`).toBe(false)
        expect(result.reasons.length, `case ${i}`).toBeGreaterThan(0)
        for (const check of result.checks) if (check.status === 'fail') failedChecks.add(check.name)
      }
    }
    expect(accepted).toBeLessThan(50)
    // The mutations reach every layer, not just the first check.
    expect([...failedChecks].sort()).toEqual([
      'crc32', 'display_version', 'image_hash', 'image_version', 'layout', 'length', 'manifest', 'product_info', 'sha256', 'signature', 'signer_cert', 'signing_key',
    ])
  })
})
