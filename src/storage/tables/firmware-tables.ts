/** Firmware releases of the slave (motion controller); the image bytes live here too. */
export interface FirmwareTables {
  firmware_releases: {
    release_id: string
    image_version: number
    display_version: string
    /** 'published' | 'active' */
    state: string
    size: number
    sha256: string
    /** 8 lowercase hex digits. */
    crc32: string
    hw_version: number
    /** The manifest JSON as uploaded (normalised). */
    manifest: string
    image: Buffer
    download_count: number
    /** Seconds since epoch, fractional. */
    created_at: number
    created_by: string
    activated_at: number | null
  }
}
