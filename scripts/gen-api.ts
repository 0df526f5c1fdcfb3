/** `npm run gen:api`: regenerates web/src/api/openapi.d.ts from the server's /openapi.json. */
import { writeFileSync } from 'node:fs'
import { API_TYPES_FILE, generateApiTypes } from './api-types.js'

writeFileSync(API_TYPES_FILE, await generateApiTypes())
console.log(`wrote ${API_TYPES_FILE}`)
process.exit(0)
