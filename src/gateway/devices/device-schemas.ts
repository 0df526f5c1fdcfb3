import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'

const Seconds = (description: string) => Type.Union([Type.Number(), Type.Null()], { description: `${description}; seconds since epoch, fractional (null: never)` })
const AnyObject = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description })

export const DeviceRecord = Type.Object({
  device_id: Type.String(),
  labels: Type.Record(Type.String(), Type.String(), { description: 'The machine’s labels (§15); {} when none' }),
  rated_cph: Type.Union([Type.Integer(), Type.Null()], { description: 'Rated placements per hour from the latest register frame (§16); null when it named none' }),
  hostname: Type.String(),
  ip: Type.String({ description: 'As reported at registration, else the link’s remote address' }),
  version: Type.String(),
  connect_time: Seconds('Registration time of the current (or last) link'),
  last_heartbeat: Seconds('Last heartbeat frame'),
  last_status: AnyObject('Status object of the last heartbeat'),
  messages_sent: Type.Integer({ description: 'Frames sent to the device since the current link registered' }),
  messages_received: Type.Integer({ description: 'Frames received from the device since the current link registered' }),
  alive: Type.Boolean({ description: 'Registered, connected, and a frame arrived within DEVICE_ALIVE_SECONDS' }),
  registered: Type.Boolean({ description: 'The current link completed registration' }),
  connected: Type.Boolean({ description: 'A link to the device is open' }),
})

export const MinimalDeviceRecord = Type.Pick(DeviceRecord, ['device_id', 'hostname', 'version', 'alive'])

export const ConnectionRecord = Type.Pick(DeviceRecord, ['connected', 'alive', 'connect_time', 'last_heartbeat', 'messages_sent', 'messages_received'])

export const DeviceParams = Type.Object({ device_id: Id('Device id') })

export const DeviceListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 1000 })),
  after: Type.Optional(Id('Cursor: the next_after of the previous page')),
})

/** `GET /api/v1/devices`: the list's paging, a search by id prefix, and the counts on request. */
export const DevicePageQuery = Type.Composite([
  DeviceListQuery,
  Type.Object({
    prefix: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9._:-]{1,64}$',
        minLength: 1,
        maxLength: 64,
        description: 'Only devices whose id starts with this (case-sensitive); `next_after` pages within them',
      }),
    ),
    counts: Type.Optional(Type.Boolean({ description: 'true: also answer `counts`, over every matching device (not just this page)' })),
    selector: Type.Optional(Type.String({ maxLength: 4096, description: 'Only machines matching this label selector (§15), e.g. `site=sz,@online=true`' })),
  }),
])

export const DeviceCounts = Type.Object(
  {
    total: Type.Integer({ description: 'Devices matching the list (visible to the user, with the prefix)' }),
    online: Type.Integer({ description: 'Of those, how many are alive' }),
  },
  { description: 'Present when asked for with counts=true' },
)

export const DeviceList = Type.Object({
  success: Type.Boolean(),
  devices: Type.Array(DeviceRecord),
  next_after: Type.Optional(Type.String({ description: 'Present when more devices follow' })),
  counts: Type.Optional(DeviceCounts),
})

export const DiscoverList = Type.Object({
  success: Type.Boolean(),
  devices: Type.Array(MinimalDeviceRecord),
  next_after: Type.Optional(Type.String()),
})

export const DeviceAnswer = Type.Object({ success: Type.Boolean(), device: DeviceRecord })

export const StatusAnswer = Type.Object({ success: Type.Boolean(), status: AnyObject('Last status reported by the device') })

export const ConnectionAnswer = Type.Composite([Type.Object({ success: Type.Boolean() }), ConnectionRecord])

export const PartialError = Type.Object({
  error: Type.String({ description: 'device_unavailable, device_timeout, device_error or bad_device_response' }),
  message: Type.String(),
  status: Type.Optional(Type.Integer({ description: 'The device’s status, for device_error' })),
})

export const OVERVIEW_PIECES = ['system', 'task', 'hardware', 'vision', 'cameras', 'debug'] as const

export const OverviewAnswer = Type.Object({
  success: Type.Boolean(),
  device: DeviceRecord,
  connection: ConnectionRecord,
  status: AnyObject('Last status reported by the device'),
  detail: Type.Object(Object.fromEntries(OVERVIEW_PIECES.map((k) => [k, AnyObject(`Device answer for ${k}; {} when it failed`)]))),
  partial_errors: Type.Record(Type.String(), PartialError, { description: 'Failed pieces, keyed like detail' }),
  partial: Type.Boolean({ description: 'True when any piece failed' }),
})

export const DeviceLoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 128 }),
})

export const DeviceLoginAnswer = Type.Object({
  success: Type.Boolean(),
  device_id: Type.String(),
  user: AnyObject('The device-side user object'),
})
