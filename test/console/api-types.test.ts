import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/api-types.js'

describe('the console’s generated API types', () => {
  it('match the server’s /openapi.json as it is now (else run npm run gen:api and commit the result)', async () => {
    const committed = readFileSync(API_TYPES_FILE, 'utf8')
    const fresh = await generateApiTypes()
    // A readable failure: the first line that differs, not 7,000 lines of diff.
    const a = committed.split('\n')
    const b = fresh.split('\n')
    const first = b.findIndex((line, i) => line !== a[i])
    const where = first < 0 && a.length === b.length ? '' : `${API_TYPES_FILE} is stale from line ${(first < 0 ? Math.min(a.length, b.length) : first) + 1}: run npm run gen:api`
    expect(where).toBe('')
  })
})
