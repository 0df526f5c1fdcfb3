/**
 * What `NODE_ENV=production` requires besides a non-default admin password (contract §17): a
 * fixture starting a production server spreads this in and adds its own users.
 */
export const PRODUCTION_ENV: Readonly<Record<string, string>> = Object.freeze({
  NODE_ENV: 'production',
  PLATFORM_REQUIRE_DEVICE_TOKEN: 'true',
  DEVICE_ENROLL_TOKEN: 'test-enroll-token-for-production',
})
