import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { linkMachine, startRolloutApp, type RolloutApp } from './rollout-kit.js'

describe.each(DIALECTS)('rollouts created from a selector (§15) on %s', (dialect) => {
  let t: RolloutApp
  let releaseId: string
  const line1 = Array.from({ length: 3 }, () => uniqueDeviceId('sel'))
  const line2 = Array.from({ length: 2 }, () => uniqueDeviceId('sel'))
  const machines: RawDevice[] = []

  const setLabels = async (id: string, labels: Record<string, string>) => {
    const res = await fetch(`${t.url}/api/v1/admin/devices/${id}/labels`, {
      method: 'PUT',
      headers: { authorization: t.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ labels }),
    })
    expect(res.status).toBe(200)
  }

  beforeAll(async () => {
    t = await startRolloutApp(dialect)
    releaseId = await t.upload(201)
    // Their tasks run, so nothing is offered while the test looks at the membership.
    for (const id of [...line1, ...line2]) machines.push(await linkMachine(t, id, () => 'running'))
    for (const id of line1) await setLabels(id, { site: 'sz', line: 'l1' })
    for (const id of line2) await setLabels(id, { site: 'sz', line: 'l2' })
  })
  afterAll(async () => {
    await Promise.all(machines.map((m) => m.close()))
    await t.close()
  })

  it('targets the machines matching at creation, records the selector, and adds no machine labelled later', async () => {
    const created = await t.api('POST', '', { release_id: releaseId, selector: 'site=sz, line in (l1)' })
    expect(created.status).toBe(201)
    expect(created.body.rollout).toMatchObject({ targeted: 3, selector: 'site=sz, line in (l1)' })
    const id = created.body.rollout.rollout_id
    const members = async () => new Set((await t.api('GET', `/${id}`)).body.devices.map((d: { device_id: string }) => d.device_id))
    expect(await members()).toEqual(new Set(line1))
    await setLabels(line2[0]!, { site: 'sz', line: 'l1' })
    expect(await members()).toEqual(new Set(line1))
    expect((await t.api('GET', `/${id}`)).body.rollout.targeted).toBe(3)
    const audit = await fetch(`${t.url}/api/v1/admin/audit?action=rollout.create&limit=1`, { headers: { authorization: t.admin } })
    expect(((await audit.json()) as { records: { detail: unknown }[] }).records[0]!.detail).toMatchObject({ rollout_id: id, targeted: 3, selector: 'site=sz, line in (l1)' })
    expect((await t.api('POST', `/${id}/abort`)).status).toBe(200)
    await setLabels(line2[0]!, { site: 'sz', line: 'l2' })
  })

  it('records no selector for a rollout created from ids', async () => {
    const created = await t.api('POST', '', { release_id: releaseId, devices: line2 })
    expect(created.body.rollout.selector).toBeNull()
    expect((await t.api('POST', `/${created.body.rollout.rollout_id}/abort`)).status).toBe(200)
  })

  it.each([
    ['both devices and selector', { devices: line1, selector: 'site=sz' }, 'bad_request'],
    ['a selector that matches nothing', { selector: 'site=nowhere' }, 'bad_request'],
    ['a malformed selector', { selector: 'site in (sz' }, 'invalid_selector'],
    ['a selector that is not a string', { selector: 3 }, 'bad_request'],
  ])('refuses %s with 400, creating nothing', async (_name, body, error) => {
    const before = (await t.api('GET', '')).body.rollouts.length
    const res = await t.api('POST', '', { release_id: releaseId, ...body })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error })
    expect((await t.api('GET', '')).body.rollouts.length).toBe(before)
  })
})
