/** MCUboot `ih_ver`: major u8, minor u8, revision u16, build_num u32. */
export interface ImageVersion {
  major: number
  minor: number
  revision: number
  build_num: number
}

const LIMITS: Record<keyof ImageVersion, number> = { major: 0xff, minor: 0xff, revision: 0xffff, build_num: 0xffff_ffff }

/** The fields that do not fit their MCUboot width, e.g. `['minor']`; empty when the version is encodable. */
export function invalidVersionFields(version: ImageVersion): (keyof ImageVersion)[] {
  return (Object.keys(LIMITS) as (keyof ImageVersion)[]).filter((field) => {
    const value = version[field]
    return !Number.isInteger(value) || value < 0 || value > LIMITS[field]
  })
}

/**
 * Parses imgtool's version syntax `major[.minor[.revision]][+build]`, e.g. `1.2.3+45`.
 * Returns undefined when the text is not a version or a part is out of range.
 */
export function parseImageVersion(text: string): ImageVersion | undefined {
  const match = /^(\d+)(?:\.(\d+)(?:\.(\d+))?)?(?:\+(\d+))?$/.exec(text)
  if (!match) return undefined
  const [, major, minor = '0', revision = '0', build = '0'] = match
  const version = { major: Number(major), minor: Number(minor), revision: Number(revision), build_num: Number(build) }
  return invalidVersionFields(version).length === 0 ? version : undefined
}

/** `major.minor.revision`: what a manifest's `display_version` must start with. */
export const releaseVersionPrefix = (v: ImageVersion): string => `${v.major}.${v.minor}.${v.revision}`

/** `major.minor.revision+build_num`, imgtool's spelling. */
export const formatImageVersion = (v: ImageVersion): string => `${releaseVersionPrefix(v)}+${v.build_num}`
