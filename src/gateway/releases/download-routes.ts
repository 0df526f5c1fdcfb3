import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { AppError } from '../../errors.js'
import {
  findActiveImageId,
  findActiveManifest,
  findImageBytes,
  findReleaseImageId,
  findReleaseManifest,
  type ImageId,
} from '../../firmware/release-repository.js'
import { parseRange } from './byte-range.js'
import { ReleaseIdParams } from './firmware-schemas.js'
import type { DownloadTally } from './download-tally.js'
import { ReleaseImageCache } from './release-image-cache.js'

/** Runs `release` once the response is done, sent or aborted (at once if it already is). */
function whenClosed(response: ServerResponse, release: () => void): void {
  if (response.closed) release()
  else response.once('close', release)
}

/** What a download route found: its value, or a 404 saying what is missing. */
function found<T>(value: T | undefined, missing: string): T {
  if (value === undefined) throw new AppError('not_found', missing)
  return value
}

/**
 * Sends the image of `release` (already resolved by the route: the active one, or one by id),
 * with §6's rules: the one handler every image route shares.
 */
async function sendImage(downloads: DownloadTally, cache: ReleaseImageCache, request: FastifyRequest, reply: FastifyReply, release: ImageId, missing: string) {
  const size = Number(release.size)
  const etag = `"${release.sha256}"`
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
  if (!range || range.start === 0) downloads.count(release.release_id)
  const lease = found(await cache.acquire(release.release_id, release.sha256), missing)
  // Held until this response is sent or aborted (see ReleaseImageCache's eviction rule).
  whenClosed(reply.raw, lease.release)
  // Views of the one cached buffer: nothing is copied per download.
  return reply.send(range ? lease.bytes.subarray(range.start, range.end + 1) : lease.bytes)
}

const IMAGE_DESCRIPTION =
  'application/octet-stream, no credentials. `ETag` is the quoted SHA-256; supports HEAD, `If-None-Match` (304) and one `Range` (206, or 416 `range_not_satisfiable`).'

/**
 * Public downloads: the active release (contract §6) and any published or active release by
 * id (§14, for rollouts). No credentials (devices fetch them). The image supports HEAD,
 * If-None-Match and a single Range so a device on a poor link can resume. The bytes come
 * from one cache of release images shared by all these routes (see ReleaseImageCache). A release
 * signed by a revoked key (FIRMWARE_REVOKED_KEYS) is not served: 404 as if it were not there.
 */
export const downloadRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { db } = deps.storage
  const tags = ['firmware']
  const cache = new ReleaseImageCache((releaseId) => findImageBytes(db, releaseId))
  // Anonymous requests write nothing: downloads are counted in memory and written aggregated.
  const { downloads, revokedReleases: revoked } = deps
  const noActive = 'No active firmware release'
  const noRelease = (releaseId: string) => `No published or active release ${releaseId}`

  app.get('/api/v1/firmware/slave/manifest.json', { schema: { tags, summary: 'Manifest of the active release' } }, async () =>
    found(revoked.served(await findActiveManifest(db)), noActive).manifest,
  )

  // Only the id, sha and size first: GET, HEAD and 304 never read the image from the database.
  app.get(
    '/api/v1/firmware/slave/system.bin',
    { schema: { tags, summary: 'Image of the active release', description: IMAGE_DESCRIPTION } },
    async (request, reply) => sendImage(downloads, cache, request, reply, found(revoked.served(await findActiveImageId(db)), noActive), noActive),
  )

  app.get(
    '/api/v1/firmware/slave/releases/:release_id/manifest.json',
    { schema: { tags, summary: 'Manifest of a published or active release', params: ReleaseIdParams } },
    async (request) => {
      const { release_id } = request.params
      return found(revoked.has(release_id) ? undefined : await findReleaseManifest(db, release_id), noRelease(release_id))
    },
  )

  app.get(
    '/api/v1/firmware/slave/releases/:release_id/system.bin',
    { schema: { tags, summary: 'Image of a published or active release', description: IMAGE_DESCRIPTION, params: ReleaseIdParams } },
    async (request, reply) => {
      const missing = noRelease(request.params.release_id)
      return sendImage(downloads, cache, request, reply, found(revoked.served(await findReleaseImageId(db, request.params.release_id)), missing), missing)
    },
  )
}
