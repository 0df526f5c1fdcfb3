import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SimKeys } from '../../src/sim/sim-keys.js'

describe('simulator key file', () => {
  let dir: string | undefined
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('survives many concurrent saves: every one succeeds, the file holds the last state, no temporary file is left', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sim-keys-'))
    const file = path.join(dir, 'keys.json')
    const keys = await SimKeys.open(file)
    const saves: Promise<void>[] = []
    for (let i = 0; i < 50; i++) {
      keys.machineKey(`pnp-${i}`)
      keys.setPlatformToken(`dev-${i}`, `token-${i}`)
      saves.push(keys.save())
    }
    await expect(Promise.all(saves)).resolves.toBeDefined()
    const reopened = await SimKeys.open(file)
    for (let i = 0; i < 50; i++) {
      expect(reopened.machineKey(`pnp-${i}`)).toBe(keys.machineKey(`pnp-${i}`))
      expect(reopened.platformToken(`dev-${i}`)).toBe(`token-${i}`)
    }
    expect(await readdir(dir)).toEqual(['keys.json'])
    expect(JSON.parse(await readFile(file, 'utf8')).machines).toBeTypeOf('object')
  })
})
