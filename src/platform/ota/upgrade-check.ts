import { badRequest } from '../../errors.js'
import type { ActiveRelease } from '../../firmware/release-repository.js'
import { compareSemVer, parseSemVer, type SemVer } from './semver.js'

/** What the device runs: an integer image version or a semantic (display) version. */
export type RunningVersion = { image: number } | { semver: SemVer }

export function parseRunningVersion(version: string): RunningVersion {
  if (/^\d{1,15}$/.test(version)) return { image: Number(version) }
  const semver = parseSemVer(version)
  if (!semver) throw badRequest(`version must be an integer image version or a semantic version, got ${JSON.stringify(version)}`)
  return { semver }
}

/**
 * Contract §7: newer when the release's `image_version` is greater than an integer
 * `version`, or its `display_version` is a greater semver than a semver `version`. A
 * `hw_version` that differs from the release's is never offered an update.
 */
export function offersUpdate(release: ActiveRelease, running: RunningVersion, hwVersion: number | undefined): boolean {
  if (hwVersion !== undefined && hwVersion !== release.hw_version) return false
  if ('image' in running) return release.image_version > running.image
  const offered = parseSemVer(release.display_version)
  return offered !== undefined && compareSemVer(offered, running.semver) > 0
}
