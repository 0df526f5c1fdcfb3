import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

type OpenApiDocument = { openapiObject: { paths?: Record<string, Record<string, { requestBody?: RequestBody }>> } }
type RequestBody = { required?: boolean; content?: Record<string, { schema?: { nullable?: boolean } }> }

/** @fastify/swagger marks every body required; a nullable body schema means it may be omitted. */
function markOptionalBodies({ openapiObject }: OpenApiDocument) {
  for (const operations of Object.values(openapiObject.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody
      if (body?.content?.['application/json']?.schema?.nullable === true) body.required = false
    }
  }
  return openapiObject
}

/** Registers the OpenAPI generator; must come before any route so every route is listed. */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
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
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          consoleToken: { type: 'apiKey', in: 'header', name: 'X-Console-Token' },
          deviceToken: { type: 'apiKey', in: 'header', name: 'X-Device-Token' },
        },
      },
    },
    transformObject: (documentObject) => markOptionalBodies(documentObject as OpenApiDocument),
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
