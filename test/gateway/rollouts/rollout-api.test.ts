import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { linkMachine, startRolloutApp, type RolloutApp } from './rollout-kit.js'

describe.each(DIALECTS)('the rollouts API on %s', (dialect) => {
  let t: RolloutApp
  let releaseId: string
  const ids = Array.from({ length: 10 }, () => uniqueDeviceId('api'))
  const machines: RawDevice[] = []

  beforeAll(async () => {
    t = await startRolloutApp(dialect)
    releaseId = await t.upload(201)
    // Known machines; their tasks run, so nothing is offered while these tests look at states.
    for (const id of ids) machines.push(await linkMachine(t, id, () => 'running'))
  })
  afterAll(async () => {
    await Promise.all(machines.map((m) => m.close()))
    await t.close()
  })

  it.each([
    ['stages not ascending', { stages: [50, 10, 100] }, /ascending/],
    ['stages equal', { stages: [50, 50, 100] }, /ascending/],
    ['stages not ending at 100', { stages: [10, 50] }, /last stage/],
    ['stages empty', { stages: [] }, /stages/],
    ['more than 20 stages', { stages: Array.from({ length: 21 }, (_, i) => i + 80) }, /stages/],
    ['a stage of 0', { stages: [0, 100] }, /stages/],
    ['a fractional stage', { stages: [10.5, 100] }, /stages/],
    ['a ratio above 1', { max_failure_ratio: 1.5 }, /max_failure_ratio/],
    ['a negative ratio', { max_failure_ratio: -0.1 }, /max_failure_ratio/],
    ['a ratio as a string', { max_failure_ratio: '0.1' }, /max_failure_ratio/],
    ['soak over a day', { soak_seconds: 86401 }, /soak_seconds/],
    ['devices not an array', { devices: 'pnp-01' }, /devices/],
    ['an empty device list', { devices: [] }, /devices/],
    ['a hostile device id', { devices: ['../etc'] }, /devices/],
  ])('refuses %s with 400', async (_name, fields, message) => {
    const res = await t.api('POST', '', { release_id: releaseId, devices: ids, ...fields })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error: 'bad_request' })
    expect(res.body.message).toMatch(message)
  })

  it('refuses unknown machines (400, naming them), a machine listed twice, and bodies that are not objects', async () => {
    const unknown = await t.api('POST', '', { release_id: releaseId, devices: [ids[0], 'never-seen-1'] })
    expect(unknown.status).toBe(400)
    expect(unknown.body.message).toContain('never-seen-1')
    expect(unknown.body.unknown_devices).toEqual(['never-seen-1'])
    expect((await t.api('POST', '', { release_id: releaseId, devices: [ids[0], ids[0]] })).status).toBe(400)
    for (const body of ['null', '[]', '"x"', '{"release_id":']) expect((await t.api('POST', '', body)).status).toBe(400)
    expect((await t.api('POST', '', {})).status).toBe(400)
  })

  it('answers 404 for an unknown release and a bad release id with 400', async () => {
    const res = await t.api('POST', '', { release_id: 'r-missing', devices: ids })
    expect(res.status).toBe(404)
    expect(res.body.error).toBe('not_found')
    expect((await t.api('POST', '', { release_id: '..', devices: ids })).status).toBe(400)
  })

  it('fixes stage membership at creation in a stable order that is not the id order', async () => {
    const created = await t.api('POST', '', { release_id: releaseId, devices: ids, stages: [10, 30, 100] })
    expect(created.status).toBe(201)
    const { rollout } = created.body
    expect(rollout).toMatchObject({ state: 'running', stage: 0, targeted: 10, counts: { waiting: 1, pending: 9, installed: 0 } })
    const read = async (query = '') => (await t.api('GET', `/${rollout.rollout_id}${query}`)).body
    const first = await read()
    expect(first.devices.map((d: { stage: number }) => d.stage)).toEqual([0, 1, 1, 2, 2, 2, 2, 2, 2, 2])
    expect(new Set(first.devices.map((d: { device_id: string }) => d.device_id))).toEqual(new Set(ids))
    // Paging with ?limit&after walks the same order.
    const page1 = await read('?limit=4')
    const page2 = await read(`?limit=4&after=${page1.next_after}`)
    const page3 = await read(`?limit=4&after=${page2.next_after}`)
    expect(page3.next_after).toBeUndefined()
    expect([...page1.devices, ...page2.devices, ...page3.devices].map((d: { device_id: string }) => d.device_id)).toEqual(
      first.devices.map((d: { device_id: string }) => d.device_id),
    )
    expect((await t.api('GET', `/${rollout.rollout_id}?limit=0`)).status).toBe(400)
    expect((await t.api('GET', `/${rollout.rollout_id}?after=nobody`)).status).toBe(400)

    // One rollout may be active: a second → 409, whatever its body.
    const second = await t.api('POST', '', { release_id: releaseId, devices: ids })
    expect(second.status).toBe(409)
    expect(second.body.error).toBe('conflict')

    // Pause, resume and abort, and the transitions that do not apply.
    expect((await t.api('POST', `/${rollout.rollout_id}/resume`)).status).toBe(409)
    expect((await t.api('POST', `/${rollout.rollout_id}/pause`)).body.rollout.state).toBe('paused')
    expect((await t.api('POST', `/${rollout.rollout_id}/pause`)).status).toBe(409)
    expect((await t.api('POST', `/${rollout.rollout_id}/resume`)).body.rollout.state).toBe('running')
    expect((await t.api('POST', `/${rollout.rollout_id}/abort`)).body.rollout.state).toBe('aborted')
    expect((await t.api('POST', `/${rollout.rollout_id}/abort`)).status).toBe(409)
    expect((await t.api('POST', `/${rollout.rollout_id}/resume`)).status).toBe(409)
    expect((await t.api('POST', '/ro-missing/pause')).status).toBe(404)
    expect((await t.api('GET', '/ro-missing')).status).toBe(404)

    // Membership and order did not move through any of it.
    expect((await read()).devices.map((d: { device_id: string }) => d.device_id)).toEqual(first.devices.map((d: { device_id: string }) => d.device_id))

    // With the aborted one done, a new rollout may start; the list is newest first and pages.
    const next = await t.api('POST', '', { release_id: releaseId, devices: ids.slice(0, 3) })
    expect(next.status).toBe(201)
    const list = (await t.api('GET', '?limit=1')).body
    expect(list.rollouts.map((r: { rollout_id: string }) => r.rollout_id)).toEqual([next.body.rollout.rollout_id])
    const older = (await t.api('GET', `?limit=1&before=${list.next_before}`)).body
    expect(older.rollouts[0]).toMatchObject({ rollout_id: rollout.rollout_id, state: 'aborted' })
    await t.api('POST', `/${next.body.rollout.rollout_id}/abort`)
  })

  it('records every creation, pause, resume and abort in the audit log, naming the rollout', async () => {
    const audit = (await (await fetch(`${t.url}/api/v1/admin/audit?limit=50`, { headers: { authorization: t.admin } })).json()) as {
      records: { action: string; detail: { rollout_id?: string } }[]
    }
    const actions = audit.records.filter((r: { action: string }) => r.action.startsWith('rollout.')).map((r: { action: string }) => r.action)
    expect(actions).toEqual(expect.arrayContaining(['rollout.create', 'rollout.pause', 'rollout.resume', 'rollout.abort']))
    for (const r of audit.records.filter((x: { action: string }) => x.action.startsWith('rollout.'))) expect(r.detail.rollout_id).toMatch(/^ro-/)
  })

  it('lets only administrators in', async () => {
    const alice = await t.auth('alice')
    const res = await fetch(`${t.url}/api/v1/admin/firmware/slave/rollouts`, { headers: { authorization: alice } })
    expect(res.status).toBe(403)
    expect((await fetch(`${t.url}/api/v1/admin/firmware/slave/rollouts`)).status).toBe(401)
  })

  it('lets exactly one of many concurrent creations win', async () => {
    const attempts = await Promise.all(Array.from({ length: 8 }, () => t.api('POST', '', { release_id: releaseId, devices: ids.slice(0, 2) })))
    const statuses = attempts.map((a) => a.status).sort()
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
    await t.api('POST', `/${attempts.find((a) => a.status === 201)!.body.rollout.rollout_id}/abort`)
  })
})
