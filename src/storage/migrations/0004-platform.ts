import type { AnyDb, MigrationFactory } from './migration-context.js'

export const platform: MigrationFactory = () => ({
  async up(_db: AnyDb) {
    // Tables of the platform capability.
  },
})
