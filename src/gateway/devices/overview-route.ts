import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import { AppError, type ErrorCode } from '../../errors.js'
import { isPlainObject } from '@fleetgate/device-agent/lib'
import { deviceMessage } from '../forwarding/device-answers.js'
import { requestUser, type GatewayContext } from '../gateway-context.js'
import { connectionRecord, liveRecord } from './device-records.js'
import { DeviceParams, OVERVIEW_PIECES, OverviewAnswer, PartialError } from './device-schemas.js'

type Piece = (typeof OVERVIEW_PIECES)[number]
type PieceError = Static<typeof PartialError>
type PieceResult = { ok: true; data: Record<string, unknown> } | { ok: false; error: PieceError }

const failed = (error: ErrorCode, message: string, status?: number): PieceResult => ({
  ok: false,
  error: status === undefined ? { error, message } : { error, message, status },
})

const SOURCES: Record<Piece, string> = {
  system: '/system/status',
  task: '/tasks/current',
  hardware: '/hardware/position',
  vision: '/vision/status',
  cameras: '/cameras/status',
  debug: '/debug/status',
}

/** Time-out of each piece: min(DEVICE_REQUEST_TIMEOUT_MS, 5000) (contract §5). */
const MAX_PIECE_TIMEOUT_MS = 5000

/** GET /api/v1/devices/{device_id}/overview: the record plus six device answers fetched at once. */
export const overviewRoute: FastifyPluginAsyncTypebox<{ ctx: GatewayContext }> = async (app, { ctx }) => {
  const { access, bus, client } = ctx
  const timeoutMs = Math.min(client.timeoutMs, MAX_PIECE_TIMEOUT_MS)

  app.get(
    '/api/v1/devices/:device_id/overview',
    {
      onRequest: ctx.deps.authenticator.userHook,
      schema: { tags: ['devices'], security: [{ bearer: [] }], params: DeviceParams, response: { 200: OverviewAnswer } },
    },
    async (request) => {
      const user = request.user!
      const deviceId = request.params.device_id
      const device = await liveRecord(bus, await access.visibleRow(user, deviceId), ctx.labels)
      const fetchPiece = async (piece: Piece): Promise<PieceResult> => {
        if (!device.connected) return failed('device_unavailable', `Device ${deviceId} is not connected`)
        try {
          const call = { method: 'GET' as const, path: SOURCES[piece], query: {}, body: null, user: requestUser(user) }
          const answer = await client.call(deviceId, call, `overview ${SOURCES[piece]}`, timeoutMs)
          if (answer.status >= 400) return failed('device_error', deviceMessage(answer), answer.status)
          if (!isPlainObject(answer.data)) return failed('bad_device_response', 'Device answer is not a JSON object')
          return { ok: true, data: answer.data }
        } catch (err) {
          if (err instanceof AppError) return failed(err.code, err.message)
          throw err
        }
      }
      const results = await Promise.all(OVERVIEW_PIECES.map(async (piece) => [piece, await fetchPiece(piece)] as const))
      const detail = {} as Record<Piece, Record<string, unknown>>
      const partial_errors: Partial<Record<Piece, PieceError>> = {}
      for (const [piece, result] of results) {
        detail[piece] = result.ok ? result.data : {}
        if (!result.ok) partial_errors[piece] = result.error
      }
      return {
        success: true,
        device,
        connection: connectionRecord(device),
        status: device.last_status,
        detail,
        partial_errors,
        partial: Object.keys(partial_errors).length > 0,
      }
    },
  )
}
