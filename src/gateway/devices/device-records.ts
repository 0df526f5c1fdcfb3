import type { Static } from '@sinclair/typebox'
import type { DeviceRouting } from '../../link/bus/device-bus.js'
import { isPlainObject } from '@fleetgate/device-agent/lib'
import type { LiveState } from '../../link/live-state.js'
import type { LabelRepository, Labels } from '../labels/label-repository.js'
import type { DeviceRow } from './device-repository.js'
import type { ConnectionRecord, DeviceRecord } from './device-schemas.js'

export type DeviceRecordValue = Static<typeof DeviceRecord>

type LabelSource = Pick<LabelRepository, 'labelsOf'>

/** The API record: the stored row and labels, overlaid with the live state when the device is linked. */
export function deviceRecord(row: DeviceRow, live: LiveState | undefined, labels: Labels = {}): DeviceRecordValue {
  const stored = {
    device_id: row.device_id,
    labels,
    rated_cph: row.rated_cph,
    hostname: row.hostname,
    ip: row.ip,
    version: row.version,
    connect_time: row.connect_time,
    last_heartbeat: row.last_heartbeat,
    last_status: parseStatus(row.last_status),
  }
  if (!live) return { ...stored, messages_sent: 0, messages_received: 0, alive: false, registered: false, connected: false }
  const beaten = live.last_heartbeat !== null
  return {
    ...stored,
    hostname: live.hostname,
    ip: live.ip,
    version: live.version,
    connect_time: live.connect_time,
    // Before the link's first heartbeat, the last one stored (from an earlier link) still stands.
    last_heartbeat: beaten ? live.last_heartbeat : stored.last_heartbeat,
    last_status: beaten ? live.last_status : stored.last_status,
    messages_sent: live.messages_sent,
    messages_received: live.messages_received,
    alive: live.alive,
    registered: true,
    connected: true,
  }
}

export function connectionRecord(record: DeviceRecordValue): Static<typeof ConnectionRecord> {
  const { connected, alive, connect_time, last_heartbeat, messages_sent, messages_received } = record
  return { connected, alive, connect_time, last_heartbeat, messages_sent, messages_received }
}

export async function deviceRecords(bus: Pick<DeviceRouting, 'live'>, rows: readonly DeviceRow[], labels: LabelSource): Promise<DeviceRecordValue[]> {
  if (rows.length === 0) return []
  const ids = rows.map((row) => row.device_id)
  const [live, labelled] = await Promise.all([bus.live(rows), labels.labelsOf(ids)])
  return rows.map((row) => deviceRecord(row, live.get(row.device_id), labelled.get(row.device_id)))
}

/** The record of one device, asking the bus for its live state. */
export async function liveRecord(bus: Pick<DeviceRouting, 'live'>, row: DeviceRow, labels: LabelSource): Promise<DeviceRecordValue> {
  return (await deviceRecords(bus, [row], labels))[0]!
}

function parseStatus(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    return isPlainObject(value) ? value : {}
  } catch {
    return {}
  }
}
