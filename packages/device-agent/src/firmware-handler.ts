import type { RequestOptions } from 'node:https'
import type { FirmwareOfferFrame, FirmwareStatusFrame } from './protocol/frames.js'
import type { BackoffOptions } from './backoff.js'

/** A release the gateway asks the machine to install (contract §4 step 6, §14). */
export type FirmwareOffer = Omit<FirmwareOfferFrame, 'type'>

/** Where an offered install stands, as reported to the gateway. */
export type FirmwareStatus = Omit<FirmwareStatusFrame, 'type'>

/** The image a machine runs. An offer matches it by `sha256` when given, else by `image_version`. */
export interface RunningFirmware {
  sha256?: string
  image_version?: number
}

/** What a machine implements to take firmware offers; the agent does the rest (see `FirmwareOptions`). */
export interface FirmwareHandler {
  /** True while the machine must not be disturbed (a task running or paused): the agent answers `busy` and the gateway offers again later. */
  isBusy(): boolean | Promise<boolean>
  /** The image the machine runs now: an offer of it is reported `installed` at once, without a download. */
  current?(): RunningFirmware | undefined | Promise<RunningFirmware | undefined>
  /**
   * Installs the downloaded image, whose size, sha256 and crc32 were checked against the offer. May
   * take time, and may re-link (`agent.relink()`, as after a reboot); reports `installed` when it
   * resolves. Throw to report `failed`, the message becoming the status's `error`.
   */
  install(image: Buffer, offer: FirmwareOffer, progress: (percent: number) => void): Promise<void>
}

export interface FirmwareOptions {
  handler: FirmwareHandler
  /** Retries, in a row, of download attempts that fetch no new byte before the offer is reported `failed`. Default 5. */
  downloadRetries?: number
  /** Delay before the download resumes. Default base 1 s, cap 30 s, full jitter. */
  downloadBackoff?: BackoffOptions
  /** A download attempt that receives nothing for this long is dropped and resumed. Default 30 s. */
  downloadIdleTimeoutMs?: number
  /** At most one `downloading` or `installing` progress report per this many ms (100 % is always reported). Default 1000. */
  progressIntervalMs?: number
  /**
   * Options for the image download's `http(s).request`. Default: the TLS settings of
   * `socketOptions` (`ca`, `cert`, `key`, `pfx`, `passphrase`, `rejectUnauthorized`).
   */
  requestOptions?: RequestOptions
}
