import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { AppError } from '../../errors.js'
import { writeAudit } from '../../storage/audit-repository.js'
import { transactionWithRetries } from '../../storage/transaction.js'
import { ActivateAnswer, ReleaseIdParams, ReleaseList, ReleaseListQuery } from './firmware-schemas.js'
import { activateRelease, listReleases } from '../../firmware/release-repository.js'
import { releaseEvent } from './release-event.js'

/** List and activate releases (administrators). */
export const releaseAdminRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage } = deps
  const tags = ['firmware']

  app.get(
    '/api/v1/admin/firmware/slave/releases',
    { schema: { tags, security: [{ bearer: [] }], querystring: ReleaseListQuery, response: { 200: ReleaseList } } },
    async (request) => {
      const { releases, next_before } = await listReleases(storage.db, request.query.limit ?? 100, request.query.before)
      return { success: true, releases: releases as never, ...(next_before ? { next_before } : {}) }
    },
  )

  app.post(
    '/api/v1/admin/firmware/slave/releases/:release_id/activate',
    { schema: { tags, security: [{ bearer: [] }], params: ReleaseIdParams, response: { 200: ActivateAnswer } } },
    async (request) => {
      const { release_id } = request.params
      if (deps.revokedReleases.has(release_id)) {
        const reasons = ['the release is signed by a revoked key (FIRMWARE_REVOKED_KEYS)']
        await writeAudit(storage.db, { actor: request.user!.username, action: 'firmware.activate', outcome: 'rejected', release_id, detail: { reasons } })
        throw new AppError('invalid_firmware', `Release ${release_id} cannot be activated: ${reasons[0]}`, { reasons })
      }
      // The activation and its audit record commit together (a failed try of either leaves neither).
      const activated = await transactionWithRetries(storage.db, async (trx) => {
        const activation = await activateRelease(trx, release_id)
        await writeAudit(trx, { actor: request.user!.username, action: 'firmware.activate', outcome: activation ? 'activated' : 'not_found', release_id })
        return activation
      })
      if (!activated) throw new AppError('not_found', `No release ${release_id}`)
      for (const old of activated.deactivated) deps.events.publish(releaseEvent(old.release_id, old.display_version, false, 'deactivated'))
      deps.events.publish(releaseEvent(release_id, activated.display_version, true, 'activated'))
      return { success: true, release_id, activated: true }
    },
  )
}
