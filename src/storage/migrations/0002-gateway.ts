import type { AnyDb, MigrationFactory } from './migration-context.js'

export const gateway: MigrationFactory = () => ({
  async up(_db: AnyDb) {
    // Tables of the gateway capability.
  },
})
