import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'

export const ReleaseIdParams = Type.Object({ release_id: Id('Release id') })

export const ReleaseListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  before: Type.Optional(Id('Cursor: the last release id of the previous page')),
})

export const ReleaseSummary = Type.Object({
  release_id: Type.String(),
  image_version: Type.Integer(),
  display_version: Type.String(),
  state: Type.Union([Type.Literal('published'), Type.Literal('active')]),
  size: Type.Integer(),
  sha256: Type.String(),
  created_at: Type.Number({ description: 'Seconds since epoch' }),
  created_by: Type.String(),
  download_count: Type.Integer(),
})

export const ReleaseList = Type.Object({
  success: Type.Boolean(),
  releases: Type.Array(ReleaseSummary),
  next_before: Type.Optional(Type.String()),
})

export const UploadAnswer = Type.Object({ success: Type.Boolean(), release_id: Type.String(), image_version: Type.Integer() })
export const ActivateAnswer = Type.Object({ success: Type.Boolean(), release_id: Type.String(), activated: Type.Boolean() })

/** Documents the multipart body for OpenAPI; the handler reads the parts itself. */
export const UploadBodyDoc = {
  type: 'object',
  required: ['image', 'manifest'],
  properties: {
    image: { type: 'string', format: 'binary', description: 'The signed MCUboot image (system.bin)' },
    manifest: { type: 'string', format: 'binary', description: 'The manifest JSON, as a file or a text field' },
  },
} as const
