import type { MultipartFile } from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { AppError } from '../../errors.js'
import { isIdentifier } from '@fleetgate/device-agent/protocol'
import { writeAudit } from '../../storage/audit-repository.js'
import { inTransaction } from '../../storage/transaction.js'
import { verifyRelease } from '../../firmware/verify-release.js'
import { UploadAnswer, UploadBodyDoc } from './firmware-schemas.js'
import { insertRelease, releaseExists } from '../../firmware/release-repository.js'
import { releaseEvent } from './release-event.js'

interface Upload {
  image?: Buffer
  manifestText?: string
}

/**
 * Reads the `image` file and the `manifest` (file or field); the size limit throws 413 mid-stream.
 * Any other failure of the multipart parser (no or wrong boundary, truncated or garbled body) is
 * the client's: 400.
 */
async function readUpload(request: FastifyRequest): Promise<Upload> {
  try {
    return await readParts(request)
  } catch (err) {
    const status = (err as { statusCode?: unknown }).statusCode
    if (err instanceof AppError || (typeof status === 'number' && status >= 400 && status < 500)) throw err
    throw new AppError('bad_request', `Malformed multipart body: ${(err as Error).message}`)
  }
}

async function readParts(request: FastifyRequest): Promise<Upload> {
  const upload: Upload = {}
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const bytes = await (part as MultipartFile).toBuffer()
      if (part.fieldname === 'image') upload.image = bytes
      else if (part.fieldname === 'manifest') upload.manifestText = bytes.toString('utf8')
    } else if (part.fieldname === 'manifest') {
      upload.manifestText = String(part.value)
    }
  }
  return upload
}

function parseManifest(text: string): { manifest: unknown; reasons: string[] } {
  try {
    return { manifest: JSON.parse(text), reasons: [] }
  } catch {
    return { manifest: undefined, reasons: ['manifest is not valid JSON'] }
  }
}

const MULTIPART_OVERHEAD_BYTES = 1024 * 1024 + 64 * 1024

/** POST /api/v1/admin/firmware/slave/releases (contract §6). */
export const uploadRoute: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { config, storage } = deps
  app.post(
    '/api/v1/admin/firmware/slave/releases',
    {
      schema: {
        tags: ['firmware'],
        summary: 'Publish a signed firmware release',
        security: [{ bearer: [] }],
        consumes: ['multipart/form-data'],
        body: UploadBodyDoc,
        response: { 201: UploadAnswer },
      },
      // The body schema documents the multipart form; the handler reads and checks the parts.
      validatorCompiler: () => () => true,
      // The image limit plus room for the manifest and the multipart framing; the image's own
      // limit is enforced part by part.
      bodyLimit: config.firmwareMaxBytes + MULTIPART_OVERHEAD_BYTES,
    },
    async (request, reply) => {
      const rootKey = config.firmwareRootPublicKey
      if (!rootKey) throw new AppError('not_configured', 'Firmware uploads need FIRMWARE_ROOT_PUBKEY')
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Expected multipart/form-data with image and manifest')
      const { image, manifestText } = await readUpload(request)
      if (!image) throw new AppError('bad_request', 'The file field "image" is required')
      if (manifestText === undefined) throw new AppError('bad_request', 'The field "manifest" is required')

      const actor = request.user!.username
      const parsed = parseManifest(manifestText)
      const claimedId = (parsed.manifest as { release?: unknown } | undefined)?.release
      const releaseId = isIdentifier(claimedId) ? claimedId : null
      const reject = async (detail: Record<string, unknown>) =>
        writeAudit(storage.db, { actor, action: 'firmware.upload', outcome: 'rejected', release_id: releaseId, detail })

      if (releaseId && (await releaseExists(storage.db, releaseId))) {
        await reject({ reasons: ['release id already exists'], size: image.length })
        throw new AppError('conflict', `Release ${releaseId} already exists`)
      }
      const result = parsed.reasons.length > 0 ? { ok: false, reasons: parsed.reasons } : verifyRelease(image, parsed.manifest, rootKey, config.firmwareRevokedKeys)
      if (!result.ok || !releaseId) {
        const reasons = result.reasons.length > 0 ? result.reasons : ['release id is missing or malformed']
        await reject({ reasons, size: image.length })
        throw new AppError('invalid_firmware', `Firmware rejected: ${reasons[0]}`, { reasons })
      }
      const manifest = parsed.manifest as {
        image_version: number
        display_version: string
        system: { sha256: string; crc32: string }
        product: { hw_version: number }
      }
      // The stored release and its audit record commit together.
      const stored = await inTransaction(storage.db, async (trx) => {
        const inserted = await insertRelease(trx, {
          release_id: releaseId,
          image_version: manifest.image_version,
          display_version: manifest.display_version,
          size: image.length,
          sha256: manifest.system.sha256.toLowerCase(),
          crc32: manifest.system.crc32.toLowerCase().replace(/^0x/, ''),
          hw_version: manifest.product.hw_version,
          manifest,
          image,
          created_by: actor,
        })
        if (inserted) {
          await writeAudit(trx, {
            actor,
            action: 'firmware.upload',
            outcome: 'accepted',
            release_id: releaseId,
            detail: { size: image.length, sha256: manifest.system.sha256.toLowerCase(), image_version: manifest.image_version },
          })
        }
        return inserted
      })
      if (!stored) {
        await reject({ reasons: ['release id already exists'], size: image.length })
        throw new AppError('conflict', `Release ${releaseId} already exists`)
      }
      deps.events.publish(releaseEvent(releaseId, manifest.display_version, false, 'uploaded'))
      return reply.status(201).send({ success: true, release_id: releaseId, image_version: manifest.image_version })
    },
  )
}
