import { generateFirmwareKeys, publicKeyPem, type FirmwareKeySet } from '../firmware/firmware-keys.js'
import { signImage } from '../firmware/sign-image.js'
import type { WorseFirmware } from '../sim/production/miss-model.js'

/**
 * The demo release places worse: a simulated machine that installs a release whose id starts
 * with `demo-` misses 8 % of its picks (against 0.3 %), so the rollout's KPI gate (contract §16)
 * pauses it with `kpi_regression`.
 */
export const DEMO_WORSE_FIRMWARE: WorseFirmware = { releasePrefix: 'demo-', missRate: 0.08 }

/**
 * The demo rollout's KPI gate: a stage's miss rate may rise by at most 0.5 points, judged once
 * each updated machine made 120 placements (two demo boards, under a minute at the demo's speed)
 * after installing, or after 10 minutes. Small on purpose: a real gate waits for thousands.
 */
export const DEMO_KPI_GATE = { max_miss_rate_increase: 0.005, min_placements: 120, wait_seconds: 600 }

/** A root and signing key made for this demo run only (never for real use), and the root's PEM for FIRMWARE_ROOT_PUBKEY. */
export function demoFirmwareKeys(): { keys: FirmwareKeySet; rootPem: string } {
  const keys = generateFirmwareKeys()
  return { keys, rootPem: publicKeyPem(keys.root.publicKey) }
}

/**
 * Uploads a freshly signed release and starts a rollout of it over the demo machines in two
 * stages with a KPI gate: the first stage's machines place worse after installing, so the gate
 * pauses it with `kpi_regression` before the second opens. Returns what to tell the user.
 */
export async function startDemoRollout(url: string, admin: { username: string; password: string }, keys: FirmwareKeySet): Promise<string> {
  const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admin) })
  if (!login.ok) return `no demo rollout: could not sign in as ${admin.username}`
  const authorization = `Bearer ${((await login.json()) as { token: string }).token}`
  const active = await fetch(`${url}/api/v1/admin/firmware/slave/rollouts?limit=1`, { headers: { authorization } })
  const latest = ((await active.json()) as { rollouts: { rollout_id: string; state: string }[] }).rollouts[0]
  if (latest && (latest.state === 'running' || latest.state === 'paused')) return `rollout ${latest.rollout_id} (from an earlier run) is ${latest.state}: ${url}/firmware/rollouts/${latest.rollout_id}`

  const build = Math.floor(Date.now() / 1000)
  const release = signImage({
    payload: Buffer.from(`demo motion controller firmware build ${build}\n`.repeat(4096)),
    version: { major: 2, minor: 4, revision: 0, build_num: build },
    product: { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'demo000', timestamp: new Date().toISOString() },
    signingKey: keys.signing.privateKey,
    signerCert: keys.signerCert,
    release: `demo-2.4.0-${build}`,
  })
  const form = new FormData()
  form.append('image', new Blob([release.image]), 'system.bin')
  form.append('manifest', JSON.stringify(release.manifest))
  const uploaded = await fetch(`${url}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization } })
  if (uploaded.status !== 201) return `no demo rollout: the upload answered ${uploaded.status}`
  const create = (extra: object) =>
    fetch(`${url}/api/v1/admin/firmware/slave/rollouts`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ release_id: release.manifest.release, stages: [50, 100], max_failure_ratio: 0.1, ...extra }),
    })
  let created = await create({ kpi_gate: DEMO_KPI_GATE })
  if (created.status !== 201) {
    // A fleetgate without the KPI gate of contract §16 may refuse it: the rollout goes on without.
    console.log(`[demo] creating the rollout with a KPI gate answered ${created.status}; creating it without one`)
    created = await create({})
  }
  if (created.status !== 201) return `no demo rollout: creating it answered ${created.status}`
  const { rollout } = (await created.json()) as { rollout: { rollout_id: string } }
  return `rollout ${rollout.rollout_id} of ${release.manifest.display_version}: the release makes machines miss more, so its KPI gate pauses it after the first stage (within a minute or two) — ${url}/firmware/rollouts/${rollout.rollout_id}`
}
