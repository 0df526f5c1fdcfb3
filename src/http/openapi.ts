import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { ERROR_CODES } from '../errors.js'

type Operation = { requestBody?: RequestBody; responses?: Record<string, unknown> }
type OpenApiDocument = { openapiObject: { paths?: Record<string, Record<string, Operation>> } }
type RequestBody = { required?: boolean; content?: Record<string, { schema?: { nullable?: boolean } }> }

/** Contract §2: the one error body, its `error` enumerating every code of `src/errors.ts`. */
const ErrorBody = {
  type: 'object' as const,
  required: ['success', 'error', 'message'],
  properties: {
    success: { type: 'boolean' as const, enum: [false] },
    error: { type: 'string' as const, enum: ERROR_CODES },
    message: { type: 'string' as const },
  },
  additionalProperties: true,
}
const ERROR_RESPONSE = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }

/**
 * @fastify/swagger marks every body required; a nullable body schema means it may be omitted.
 * Every operation also gets the error body as its `default` response.
 */
function finishDocument({ openapiObject }: OpenApiDocument) {
  for (const operations of Object.values(openapiObject.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody
      if (body?.content?.['application/json']?.schema?.nullable === true) body.required = false
      operation.responses = { ...operation.responses, default: operation.responses?.default ?? ERROR_RESPONSE }
    }
  }
  return openapiObject
}

export interface OpenApiOptions {
  /** Schemas listed in `components.schemas` beside the error body, by name (the event stream's `data` of each kind). */
  schemas?: Record<string, object>
}

/** Registers the OpenAPI generator; must come before any route so every route is listed. */
export async function installOpenApi(app: FastifyInstance, options: OpenApiOptions = {}): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'fleetgate',
        version: '0.1.0',
        description:
          'Cloud gateway for pick-and-place machines (/api/v1) and IoT platform for HTTP-polling devices (/v1, /api/admin).',
      },
      components: {
        schemas: { Error: ErrorBody, ...options.schemas },
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          consoleToken: { type: 'apiKey', in: 'header', name: 'X-Console-Token' },
          deviceToken: { type: 'apiKey', in: 'header', name: 'X-Device-Token' },
        },
      },
    },
    transformObject: (documentObject) => finishDocument(documentObject as OpenApiDocument),
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
