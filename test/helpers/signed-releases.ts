import { generateFirmwareKeys, publicKeyPem } from '../../src/firmware/firmware-keys.js'
import type { ImageVersion } from '../../src/firmware/image-version.js'
import { signImage } from '../../src/firmware/sign-image.js'

const PRODUCT = { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'abc1234', timestamp: '2026-11-01T12:00:00Z' }

/**
 * A fresh root/signing key chain and a maker of valid signed releases by build number, for
 * tests that upload firmware. `rootPubkey` is the FIRMWARE_ROOT_PUBKEY that accepts them.
 */
export function signedReleases(options: {
  version: Omit<ImageVersion, 'build_num'>
  payload: (build: number) => Buffer
  releaseId?: (build: number) => string
}) {
  const keys = generateFirmwareKeys()
  return {
    rootPubkey: publicKeyPem(keys.root.publicKey),
    release: (build: number) =>
      signImage({
        payload: options.payload(build),
        version: { ...options.version, build_num: build },
        product: PRODUCT,
        signingKey: keys.signing.privateKey,
        signerCert: keys.signerCert,
        ...(options.releaseId ? { release: options.releaseId(build) } : {}),
      }),
  }
}
