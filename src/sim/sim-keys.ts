import { randomBytes } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** What the simulator keeps between runs so a restarted machine presents the same identity. */
export const SimKeysFile = Type.Object({
  machines: Type.Record(Type.String(), Type.String({ minLength: 16, maxLength: 256 })),
  platform: Type.Record(Type.String(), Type.Object({ device_token: Type.Optional(Type.String()) })),
})
export type SimKeysFile = Static<typeof SimKeysFile>

export const newDeviceKey = () => randomBytes(32).toString('base64url')

/**
 * Device keys and platform tokens, optionally persisted to a JSON file (mode 0600). A missing
 * file starts empty; an unreadable one is an error rather than silently replaced, since
 * replacing it would lock the machines out of the gateway (keys are trusted on first use).
 */
export class SimKeys {
  private saving: Promise<void> = Promise.resolve()

  private constructor(
    private readonly path: string | null,
    private readonly data: SimKeysFile,
  ) {}

  static async open(path: string | null): Promise<SimKeys> {
    if (path === null) return new SimKeys(null, { machines: {}, platform: {} })
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new SimKeys(path, { machines: {}, platform: {} })
      throw err
    }
    let data: unknown
    try {
      data = JSON.parse(text)
    } catch {
      throw new Error(`${path} is not valid JSON; fix or delete it (deleting makes new machine keys)`)
    }
    if (!Value.Check(SimKeysFile, data)) throw new Error(`${path} does not hold simulator keys; fix or delete it`)
    return new SimKeys(path, data)
  }

  /** The machine's key, made on first use. */
  machineKey(deviceId: string): string {
    return (this.data.machines[deviceId] ??= newDeviceKey())
  }

  platformToken(deviceId: string): string | undefined {
    return this.data.platform[deviceId]?.device_token
  }

  setPlatformToken(deviceId: string, token: string): void {
    this.data.platform[deviceId] = { device_token: token }
  }

  /**
   * Writes the file atomically (temporary file, then rename). Saves run one after another, each
   * writing the newest data; the temporary name is unique besides, so no two writers ever share it.
   */
  save(): Promise<void> {
    const path = this.path
    if (path === null) return Promise.resolve()
    const write = async () => {
      const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
      await writeFile(tmp, JSON.stringify(this.data, null, 2) + '\n', { mode: 0o600 })
      await rename(tmp, path)
    }
    const saved = this.saving.then(write, write)
    this.saving = saved.catch(() => undefined)
    return saved
  }
}
