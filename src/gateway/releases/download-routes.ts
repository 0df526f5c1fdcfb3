import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { AppError } from '../../errors.js'
import { countDownload, findActiveImage, findActiveManifest } from '../../firmware/release-repository.js'
import { parseRange } from './byte-range.js'

/**
 * Public downloads of the active release: no credentials (devices fetch them). The image
 * supports HEAD, If-None-Match and a single Range so a device on a poor link can resume.
 */
export const downloadRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage } = deps
  const tags = ['firmware']

  app.get('/api/v1/firmware/slave/manifest.json', { schema: { tags, summary: 'Manifest of the active release' } }, async () => {
    const manifest = await findActiveManifest(storage.db)
    if (manifest === undefined) throw new AppError('not_found', 'No active firmware release')
    return manifest
  })

  app.get('/api/v1/firmware/slave/system.bin', { schema: { tags, summary: 'Image of the active release' } }, async (request, reply) => {
    const active = await findActiveImage(storage.db)
    if (!active) throw new AppError('not_found', 'No active firmware release')
    const image = Buffer.from(active.image)
    const etag = `"${active.sha256}"`
    reply.header('etag', etag).header('accept-ranges', 'bytes').header('cache-control', 'no-cache')
    const ifNoneMatch = request.headers['if-none-match']
    if (ifNoneMatch && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))) {
      return reply.status(304).send()
    }
    const range = parseRange(request.headers.range, image.length)
    if (range === 'unsatisfiable') {
      reply.header('content-range', `bytes */${image.length}`)
      throw new AppError('range_not_satisfiable', 'Requested range not satisfiable')
    }
    const isGet = request.method === 'GET'
    reply.header('content-type', 'application/octet-stream')
    if (range) {
      if (isGet && range.start === 0) await countDownload(storage.db, active.release_id)
      reply.header('content-range', `bytes ${range.start}-${range.end}/${image.length}`)
      return reply.status(206).send(image.subarray(range.start, range.end + 1))
    }
    if (isGet) await countDownload(storage.db, active.release_id)
    return reply.send(image)
  })
}
