import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ID_PATTERN } from './ids.js'
import { isPlainObject } from '../lib/is-plain-object.js'
import { ProductionAckFrame, ProductionFrame } from './production.js'

/**
 * The device-link protocol (contract §4): the single definition of every frame, shared by the
 * gateway and the device agent. One JSON object per WebSocket text frame.
 */

export const DEVICE_LINK_PATH = '/api/v1/device-link'

export const RegisterFrame = Type.Object(
  {
    type: Type.Literal('register'),
    device_id: Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 64 }),
    key: Type.String({ minLength: 16, maxLength: 256, description: 'Device secret; trusted on first use' }),
    hostname: Type.String({ maxLength: 256 }),
    version: Type.String({ maxLength: 256 }),
    ip: Type.Optional(Type.String({ maxLength: 256 })),
    enroll_token: Type.Optional(Type.String({ maxLength: 256, description: 'Needed for a first registration when DEVICE_ENROLL_TOKEN is set' })),
    rated_cph: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: "The machine's rated placements per hour (§16), kept on the device record" })),
  },
  { title: 'RegisterFrame', description: 'Device → gateway, the first frame of every connection' },
)
export type RegisterFrame = Static<typeof RegisterFrame>

export const RegisteredFrame = Type.Object(
  {
    type: Type.Literal('registered'),
    device_id: Type.String(),
    server_time: Type.Number({ description: 'Seconds since epoch, fractional' }),
  },
  { title: 'RegisteredFrame', description: 'Gateway → device, the answer to a valid register frame' },
)
export type RegisteredFrame = Static<typeof RegisteredFrame>

export const HeartbeatFrame = Type.Object(
  {
    type: Type.Literal('heartbeat'),
    status: Type.Record(Type.String(), Type.Unknown(), { description: 'Any object; becomes the device record last_status' }),
  },
  { title: 'HeartbeatFrame', description: 'Device → gateway, at least every 20 s' },
)
export type HeartbeatFrame = Static<typeof HeartbeatFrame>

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
export const HttpMethod = Type.Union(HTTP_METHODS.map((m) => Type.Literal(m)))
export type HttpMethod = Static<typeof HttpMethod>

export const RequestUser = Type.Object(
  { id: Type.String(), username: Type.String(), role: Type.String() },
  { description: 'The gateway user on whose behalf the request is made' },
)
export type RequestUser = Static<typeof RequestUser>

export const RequestQuery = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))
export type RequestQuery = Static<typeof RequestQuery>

export const RequestFrame = Type.Object(
  {
    type: Type.Literal('request'),
    id: Type.String({ minLength: 1, maxLength: 128 }),
    method: HttpMethod,
    path: Type.String({ pattern: '^/', description: 'Device-side path: the gateway path after /api/v1/devices/{device_id}' }),
    query: RequestQuery,
    body: Type.Unknown({ description: 'JSON body, null when none' }),
    user: RequestUser,
  },
  { title: 'RequestFrame', description: 'Gateway → device, a forwarded API call' },
)
export type RequestFrame = Static<typeof RequestFrame>

export const ResponseFrame = Type.Object(
  {
    type: Type.Literal('response'),
    id: Type.String({ description: 'The id of the request answered' }),
    status: Type.Integer({ minimum: 100, maximum: 599, description: 'HTTP-like status' }),
    data: Type.Unknown({ description: 'The answer; null when none' }),
  },
  { title: 'ResponseFrame', description: 'Device → gateway, the answer to a request frame' },
)
export type ResponseFrame = Static<typeof ResponseFrame>

const Sha256Hex = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the image, lower-case hex' })

export const FirmwareOfferFrame = Type.Object(
  {
    type: Type.Literal('firmware-offer'),
    rollout_id: Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 64 }),
    release_id: Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 64 }),
    image_version: Type.Integer({ minimum: 0 }),
    display_version: Type.String(),
    size: Type.Integer({ minimum: 0, description: 'Image size in bytes' }),
    sha256: Sha256Hex,
    crc32: Type.String({ description: 'CRC-32 (IEEE) of the image, 8 hex digits' }),
    url: Type.String({ pattern: '^/', description: "Path of the release's system.bin on the gateway (contract §14)" }),
  },
  { title: 'FirmwareOfferFrame', description: 'Gateway → device: install this release (contract §4 step 6, §14)' },
)
export type FirmwareOfferFrame = Static<typeof FirmwareOfferFrame>

export const FIRMWARE_STATUS_STATES = ['busy', 'downloading', 'installing', 'installed', 'failed'] as const
export type FirmwareStatusState = (typeof FIRMWARE_STATUS_STATES)[number]

export const FirmwareStatusFrame = Type.Object(
  {
    type: Type.Literal('firmware-status'),
    rollout_id: Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 64 }),
    release_id: Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 64 }),
    state: Type.Union(FIRMWARE_STATUS_STATES.map((s) => Type.Literal(s)), {
      description: '`busy`: declined for now (a task is running); the others report the install',
    }),
    progress: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Percent of the current step' })),
    error: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { title: 'FirmwareStatusFrame', description: 'Device → gateway: where an offered install stands (contract §4 step 6)' },
)
export type FirmwareStatusFrame = Static<typeof FirmwareStatusFrame>

/** Frames a device sends. */
export const DeviceFrame = Type.Union([RegisterFrame, HeartbeatFrame, ResponseFrame, FirmwareStatusFrame, ProductionFrame])
export type DeviceFrame = RegisterFrame | HeartbeatFrame | ResponseFrame | FirmwareStatusFrame | ProductionFrame

/** Frames the gateway sends. */
export const GatewayFrame = Type.Union([RegisteredFrame, RequestFrame, FirmwareOfferFrame, ProductionAckFrame])
export type GatewayFrame = RegisteredFrame | RequestFrame | FirmwareOfferFrame | ProductionAckFrame

export type Frame = DeviceFrame | GatewayFrame

const SCHEMAS_BY_TYPE: Record<Frame['type'], TSchema> = {
  register: RegisterFrame,
  registered: RegisteredFrame,
  heartbeat: HeartbeatFrame,
  request: RequestFrame,
  response: ResponseFrame,
  'firmware-offer': FirmwareOfferFrame,
  'firmware-status': FirmwareStatusFrame,
  production: ProductionFrame,
  'production-ack': ProductionAckFrame,
}
const CHECKERS = Object.fromEntries(
  Object.entries(SCHEMAS_BY_TYPE).map(([type, schema]) => [type, TypeCompiler.Compile(schema)]),
) as Record<Frame['type'], ReturnType<typeof TypeCompiler.Compile>>

export const FRAME_TYPES = Object.keys(SCHEMAS_BY_TYPE) as Frame['type'][]
const DEVICE_FRAME_TYPES: ReadonlySet<string> = new Set<DeviceFrame['type']>(['register', 'heartbeat', 'response', 'firmware-status', 'production'])
const GATEWAY_FRAME_TYPES: ReadonlySet<string> = new Set<GatewayFrame['type']>(['registered', 'request', 'firmware-offer', 'production-ack'])

/** Why a frame was refused; `frameType` is set when the frame named a known type. The gateway closes with 4400. */
export class FrameError extends Error {
  constructor(
    message: string,
    readonly frameType?: Frame['type'],
  ) {
    super(message)
    this.name = 'FrameError'
  }
}

/**
 * Parses and validates one text frame of either direction. Throws `FrameError` when the text is
 * not a JSON object, names no known `type`, or a field is missing or of the wrong shape.
 */
export function parseFrame(text: string): Frame {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new FrameError('frame is not valid JSON')
  }
  if (!isPlainObject(value)) throw new FrameError('frame is not a JSON object')
  const type = (value as { type?: unknown }).type
  if (typeof type !== 'string' || !(type in CHECKERS)) throw new FrameError(`unknown frame type ${JSON.stringify(type ?? null)}`)
  const checker = CHECKERS[type as Frame['type']]
  if (!checker.Check(value)) {
    const first = checker.Errors(value).First()
    const where = first?.path ? first.path.slice(1) || 'frame' : 'frame'
    throw new FrameError(`invalid ${type} frame: ${where}: ${first?.message ?? 'does not match the schema'}`, type as Frame['type'])
  }
  return value as Frame
}

/** `parseFrame` restricted to what a device may send (the gateway's side of the link). */
export function parseDeviceFrame(text: string): DeviceFrame {
  const frame = parseFrame(text)
  if (!DEVICE_FRAME_TYPES.has(frame.type)) throw new FrameError(`a device may not send ${frame.type} frames`, frame.type)
  return frame as DeviceFrame
}

/** `parseFrame` restricted to what the gateway may send (the device's side of the link). */
export function parseGatewayFrame(text: string): GatewayFrame {
  const frame = parseFrame(text)
  if (!GATEWAY_FRAME_TYPES.has(frame.type)) throw new FrameError(`the gateway may not send ${frame.type} frames`, frame.type)
  return frame as GatewayFrame
}
