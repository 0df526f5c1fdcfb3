import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { AppError } from '../../errors.js'
import { countDownload, findActiveImageId, findActiveManifest } from '../../firmware/release-repository.js'
import { ActiveImageCache } from './active-image-cache.js'
import { parseRange } from './byte-range.js'

/**
 * Public downloads of the active release: no credentials (devices fetch them). The image
 * supports HEAD, If-None-Match and a single Range so a device on a poor link can resume. The
 * bytes come from one cached copy of the active image (see ActiveImageCache).
 */
export const downloadRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage } = deps
  const tags = ['firmware']
  const cache = new ActiveImageCache(storage.db)

  app.get('/api/v1/firmware/slave/manifest.json', { schema: { tags, summary: 'Manifest of the active release' } }, async () => {
    const manifest = await findActiveManifest(storage.db)
    if (manifest === undefined) throw new AppError('not_found', 'No active firmware release')
    return manifest
  })

  app.get('/api/v1/firmware/slave/system.bin', { schema: { tags, summary: 'Image of the active release' } }, async (request, reply) => {
    // Only the id, sha and size: GET, HEAD and 304 never read the image from the database.
    const active = await findActiveImageId(storage.db)
    if (!active) throw new AppError('not_found', 'No active firmware release')
    const size = Number(active.size)
    const etag = `"${active.sha256}"`
    reply.header('etag', etag).header('accept-ranges', 'bytes').header('cache-control', 'no-cache')
    const ifNoneMatch = request.headers['if-none-match']
    if (ifNoneMatch && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))) {
      return reply.status(304).send()
    }
    const range = parseRange(request.headers.range, size)
    if (range === 'unsatisfiable') {
      reply.header('content-range', `bytes */${size}`)
      return reply.status(416).send({ success: false, error: 'range_not_satisfiable', message: 'Requested range not satisfiable' })
    }
    reply.header('content-type', 'application/octet-stream')
    if (range) reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`)
    if (request.method === 'HEAD') {
      // Fastify would set Content-Length from an empty payload: the head is written as is.
      reply.hijack()
      reply.raw.writeHead(reply.statusCode, { ...reply.getHeaders(), 'content-length': String(range ? range.end - range.start + 1 : size) } as OutgoingHttpHeaders)
      reply.raw.end()
      return reply
    }
    if (!range || range.start === 0) await countDownload(storage.db, active.release_id)
    const image = await cache.get(active.release_id, active.sha256)
    if (!image) throw new AppError('not_found', 'No active firmware release')
    // Views of the one cached buffer: nothing is copied per download.
    return reply.send(range ? image.subarray(range.start, range.end + 1) : image)
  })
}
