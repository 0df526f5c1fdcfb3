import { publicKeyPem } from '../../../src/firmware/firmware-keys.js'
import { generateFirmwareKeys } from '../../../src/firmware/firmware-keys.js'
import { signImage } from '../../../src/firmware/sign-image.js'
import type { Dialect } from '../../../src/storage/storage.js'
import type { TestDatabase } from '../../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../helpers/gateway-app.js'
import { RawDevice, type RequestHandler } from '../helpers/raw-device.js'

const keys = generateFirmwareKeys()
const PRODUCT = { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'abc1234', timestamp: '2026-11-01T12:00:00Z' }

/** A valid signed release of build `build` (signed once per build: ECDSA is randomised). */
const made = new Map<number, ReturnType<typeof signImage>>()
export function release(build: number) {
  if (!made.has(build)) {
    made.set(
      build,
      signImage({
        payload: Buffer.from(`controller build ${build} `.repeat(100)),
        version: { major: 2, minor: 0, revision: 1, build_num: build },
        product: PRODUCT,
        signingKey: keys.signing.privateKey,
        signerCert: keys.signerCert,
        release: `r-2.0.1-${build}`,
      }),
    )
  }
  return made.get(build)!
}

export interface RolloutApp extends GatewayApp {
  admin: string
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>
  upload(build: number): Promise<string>
}

/** A gateway with a firmware root key and fast rollout passes; `env` adds configuration. */
export async function startRolloutApp(dialect: Dialect, env: Record<string, string> = {}, database?: TestDatabase): Promise<RolloutApp> {
  const app = await startGatewayApp(dialect, { FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey), ...env }, { rollouts: { passIntervalMs: 50 }, database })
  const admin = await app.auth('admin')
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${app.url}/api/v1/admin/firmware/slave/rollouts${path}`, {
      method,
      headers: { authorization: admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    return { status: res.status, body: await res.json() }
  }
  const upload = async (build: number) => {
    const r = release(build)
    const form = new FormData()
    form.append('image', new Blob([r.image]), 'system.bin')
    form.append('manifest', JSON.stringify(r.manifest))
    const res = await fetch(`${app.url}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: admin } })
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`)
    return r.manifest.release as string
  }
  return Object.assign(app, { admin, api, upload })
}

/** What a machine's task check answers: a task in `state`, or none. */
export const taskAnswer =
  (state: () => string | null): RequestHandler =>
  (frame) =>
    frame.path === '/tasks/current'
      ? { status: 200, data: { task: state() === null ? null : { id: 't1', order_id: 'o1', state: state(), placed: 1, total: 9, started_at: 0 } } }
      : { status: 404, data: { error: 'not_found' } }

/** A raw machine linked to the gateway whose task is in `state()`. */
export async function linkMachine(app: GatewayApp, deviceId: string, state: () => string | null = () => null): Promise<RawDevice> {
  return RawDevice.link(app.linkUrl, { device_id: deviceId }, taskAnswer(state))
}

/** Reports a status of the rollout's release from `device`. */
export function report(device: RawDevice, offer: Record<string, unknown>, state: string, extra: Record<string, unknown> = {}): void {
  device.send({ type: 'firmware-status', rollout_id: offer.rollout_id, release_id: offer.release_id, state, ...extra })
}

export const isOffer = (f: Record<string, unknown>) => f.type === 'firmware-offer'

/** The first offer the machine received, already or to come. */
export const offerTo = (device: RawDevice): Promise<Record<string, unknown>> => {
  const seen = device.received.find(isOffer)
  return seen ? Promise.resolve(seen) : device.next(isOffer)
}

/** One sample of the app's /metrics, named with its labels as Prometheus prints it (0 while absent). */
export async function metricSample(app: GatewayApp, sample: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `))
  return line === undefined ? 0 : Number(line.slice(sample.length + 1))
}

/** The rollouts' tallies equal what counting their machines gives: every transition kept them (issue #32, item 7). */
export async function tallyMismatches(app: GatewayApp): Promise<string[]> {
  // One snapshot for both reads (PostgreSQL: repeatable read; SQLite: its one connection is the transaction's).
  const begin = app.storage.dialect === 'postgres' ? app.storage.db.transaction().setIsolationLevel('repeatable read') : app.storage.db.transaction()
  const { counted, kept } = await begin.execute(async (db) => ({
    counted: await db.selectFrom('rollout_devices').select(['rollout_id', 'stage', 'state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy(['rollout_id', 'stage', 'state']).execute(),
    kept: await db.selectFrom('rollout_tallies').select(['rollout_id', 'stage', 'state', 'n']).where('n', '!=', 0).execute(),
  }))
  const key = (r: { rollout_id: string; stage: number; state: string; n: number }) => `${r.rollout_id}/${Number(r.stage)}/${r.state}=${Number(r.n)}`
  const a = new Set(counted.map(key))
  const b = new Set(kept.map(key))
  return [...[...a].filter((k) => !b.has(k)).map((k) => `counted ${k}`), ...[...b].filter((k) => !a.has(k)).map((k) => `kept ${k}`)]
}
