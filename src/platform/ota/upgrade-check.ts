import { compare, parse, type SemVer } from 'semver'
import { badRequest } from '../../errors.js'
import type { ActiveRelease } from '../../firmware/release-repository.js'

/** What the device runs: an integer image version or a semantic (display) version. */
export type RunningVersion = { image: number } | { semver: SemVer }

/**
 * An integer image version, or a semantic version as semver.org defines it (a leading `v`
 * allowed): `1.2.3.4`, `1.2` or `01.2.3` are neither, and answer 400.
 */
export function parseRunningVersion(version: string): RunningVersion {
  if (/^\d{1,15}$/.test(version)) return { image: Number(version) }
  const semver = parse(version)
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
  const offered = parse(release.display_version)
  return offered !== null && compare(offered, running.semver) > 0
}
