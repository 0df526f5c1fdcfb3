import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // The suite imports @fleetgate/device-agent through its built dist/: check it is there and fresh.
    globalSetup: ['test/helpers/device-agent-built.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/skip-guard-reporter.ts'],
  },
})
