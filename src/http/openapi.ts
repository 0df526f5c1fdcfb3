import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

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
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
