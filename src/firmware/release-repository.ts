import { AppError } from '../errors.js'
import { pageWithCursor } from '../storage/paging.js'
import { type Db } from '../storage/storage.js'
import { transactionWithRetries } from '../storage/transaction.js'
import { nowSeconds } from '../lib/time.js'

export interface NewRelease {
  release_id: string
  image_version: number
  display_version: string
  size: number
  sha256: string
  crc32: string
  hw_version: number
  manifest: unknown
  image: Buffer
  created_by: string
}

const LIST_COLUMNS = ['release_id', 'image_version', 'display_version', 'state', 'size', 'sha256', 'created_at', 'created_by'] as const

/** Stores a verified release as `published`. False when the id is taken (→ 409). */
export async function insertRelease(db: Db, r: NewRelease): Promise<boolean> {
  const inserted = await db
    .insertInto('firmware_releases')
    .values({
      release_id: r.release_id,
      image_version: r.image_version,
      display_version: r.display_version,
      state: 'published',
      size: r.size,
      sha256: r.sha256,
      crc32: r.crc32,
      hw_version: r.hw_version,
      manifest: JSON.stringify(r.manifest),
      image: r.image,
      download_count: 0,
      created_at: nowSeconds(),
      created_by: r.created_by,
      activated_at: null,
    })
    .onConflict((oc) => oc.column('release_id').doNothing())
    .returning('release_id')
    .executeTakeFirst()
  return inserted !== undefined
}

export async function releaseExists(db: Db, releaseId: string): Promise<boolean> {
  return (await db.selectFrom('firmware_releases').select('release_id').where('release_id', '=', releaseId).executeTakeFirst()) !== undefined
}

/** Newest first; `before` is the release id the previous page ended with. */
export async function listReleases(db: Db, limit: number, before?: string) {
  let query = db
    .selectFrom('firmware_releases')
    .select([...LIST_COLUMNS, 'download_count'])
    .orderBy('created_at', 'desc')
    .orderBy('release_id', 'desc')
    .limit(limit + 1)
  if (before !== undefined) {
    const cursor = await db.selectFrom('firmware_releases').select(['created_at', 'release_id']).where('release_id', '=', before).executeTakeFirst()
    if (!cursor) throw new AppError('bad_request', 'Unknown cursor')
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', cursor.created_at),
        eb.and([eb('created_at', '=', cursor.created_at), eb('release_id', '<', cursor.release_id)]),
      ]),
    )
  }
  const rows = await query.execute()
  const { rows: releases, next } = pageWithCursor(rows, limit, (row) => row.release_id)
  return { releases, next_before: next }
}

/** What an activation changed: the release's version and the release(s) no longer active. */
export interface Activation {
  display_version: string
  deactivated: { release_id: string; display_version: string }[]
}

/**
 * Makes `releaseId` the active release and the previous one `published` again, in one
 * transaction (the caller's, when `db` is one: its consequences commit with it). A unique partial
 * index allows one active row; a concurrent activation that loses the race is retried. Returns
 * false when the release does not exist.
 */
export function activateRelease(db: Db, releaseId: string): Promise<false | Activation> {
  return transactionWithRetries(db, async (trx) => {
    const target = await trx.selectFrom('firmware_releases').select('display_version').where('release_id', '=', releaseId).executeTakeFirst()
    if (!target) return false
    const deactivated = await trx
      .updateTable('firmware_releases')
      .set({ state: 'published' })
      .where('state', '=', 'active')
      .where('release_id', '!=', releaseId)
      .returning(['release_id', 'display_version'])
      .execute()
    await trx.updateTable('firmware_releases').set({ state: 'active', activated_at: nowSeconds() }).where('release_id', '=', releaseId).execute()
    return { display_version: target.display_version, deactivated }
  })
}

/** What a download needs to answer GET, HEAD and 304: never the image bytes. */
export interface ImageId {
  release_id: string
  sha256: string
  size: number
}

const IMAGE_ID_COLUMNS = ['release_id', 'sha256', 'size'] as const

/** States whose manifest and image devices may download (contract §6, §14). */
const DOWNLOADABLE_STATES = ['published', 'active']

/** Which release is active, without its bytes: what every download of the active image asks first. */
export async function findActiveImageId(db: Db): Promise<ImageId | undefined> {
  return db.selectFrom('firmware_releases').select(IMAGE_ID_COLUMNS).where('state', '=', 'active').executeTakeFirst()
}

/** One published or active release, without its bytes: what a download by release id asks first. */
export async function findReleaseImageId(db: Db, releaseId: string): Promise<ImageId | undefined> {
  return db
    .selectFrom('firmware_releases')
    .select(IMAGE_ID_COLUMNS)
    .where('release_id', '=', releaseId)
    .where('state', 'in', DOWNLOADABLE_STATES)
    .executeTakeFirst()
}

/** The bytes of one release (read only when the image cache misses). */
export async function findImageBytes(db: Db, releaseId: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('firmware_releases').select('image').where('release_id', '=', releaseId).executeTakeFirst()
  return row?.image
}

/** The active release's id and manifest. */
export async function findActiveManifest(db: Db): Promise<{ release_id: string; manifest: unknown } | undefined> {
  const row = await db.selectFrom('firmware_releases').select(['release_id', 'manifest']).where('state', '=', 'active').executeTakeFirst()
  return row ? { release_id: row.release_id, manifest: JSON.parse(row.manifest) as unknown } : undefined
}

/** The manifest of one published or active release. */
export async function findReleaseManifest(db: Db, releaseId: string): Promise<unknown | undefined> {
  const row = await db
    .selectFrom('firmware_releases')
    .select('manifest')
    .where('release_id', '=', releaseId)
    .where('state', 'in', DOWNLOADABLE_STATES)
    .executeTakeFirst()
  return row ? (JSON.parse(row.manifest) as unknown) : undefined
}

/** Adds `n` downloads to a release's counter (counted in memory first: `DownloadTally`). */
export async function addDownloads(db: Db, releaseId: string, n: number): Promise<void> {
  await db
    .updateTable('firmware_releases')
    .set((eb) => ({ download_count: eb('download_count', '+', n) }))
    .where('release_id', '=', releaseId)
    .execute()
}

/** What an update check needs of the active release (never the image bytes). */
export type ActiveRelease = Pick<NewRelease, 'release_id' | 'image_version' | 'display_version' | 'size' | 'sha256' | 'crc32' | 'hw_version'>

/** The release devices should run now, or undefined when none is active. */
export async function findActiveRelease(db: Db): Promise<ActiveRelease | undefined> {
  return db
    .selectFrom('firmware_releases')
    .select(['release_id', 'image_version', 'display_version', 'size', 'sha256', 'crc32', 'hw_version'])
    .where('state', '=', 'active')
    .executeTakeFirst()
}

/** Where devices download the active image (relative to the server's base URL). */
export const SYSTEM_BIN_PATH = '/api/v1/firmware/slave/system.bin'

/** What an offer of a release says of it (never the image bytes). */
export async function findReleaseSummary(db: Db, releaseId: string): Promise<ActiveRelease | undefined> {
  return db
    .selectFrom('firmware_releases')
    .select(['release_id', 'image_version', 'display_version', 'size', 'sha256', 'crc32', 'hw_version'])
    .where('release_id', '=', releaseId)
    .executeTakeFirst()
}
