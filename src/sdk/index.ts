/**
 * `fleetgate/sdk`, deprecated: the device SDK moved to its own package, `@fleetgate/device-agent`
 * (`packages/device-agent`). This re-export keeps old imports working for one more release.
 */
export * from '@fleetgate/device-agent'
