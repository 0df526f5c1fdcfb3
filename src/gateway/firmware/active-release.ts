import type { Db } from '../../storage/storage.js'

/** What an update check needs of the active release (never the image bytes). */
export interface ActiveRelease {
  release_id: string
  image_version: number
  display_version: string
  size: number
  sha256: string
  crc32: string
  hw_version: number
}

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
