import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorBody } from '../errors.js'
import { consoleSecurityHeaders } from './security-headers.js'

/** Paths that keep their JSON behaviour even when a browser asks for HTML (contract §12). */
const API_PREFIXES = ['/api/', '/v1/', '/svc/', '/docs', '/openapi.json', '/healthz', '/readyz', '/metrics'] as const
const API_EXACT = new Set(['/api', '/v1', '/svc'])

/** Where `npm run build` writes the console (vite's outDir in web/vite.config.ts). */
export function defaultConsoleDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return path.join(dir, 'dist', 'console')
}

export function isApiPath(pathname: string): boolean {
  return API_EXACT.has(pathname) || API_PREFIXES.some((p) => pathname.startsWith(p))
}

function wantsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html')
}

/**
 * Serves the built console: hashed assets under /assets/ as immutable, and the page
 * (index.html, `no-cache`) for every other GET a browser makes, so client routes work on reload.
 * Without a build the server still runs and says how to make one.
 */
export async function consoleRoutes(app: FastifyInstance, options: { dir?: string }) {
  const dir = options.dir ?? defaultConsoleDir()
  const indexFile = path.join(dir, 'index.html')
  const page = existsSync(indexFile) ? readFileSync(indexFile) : null
  if (!page) app.log.warn(`Web console not built (${indexFile} is missing): run "npm run build" to serve it`)

  if (page && existsSync(path.join(dir, 'assets'))) {
    await app.register(async (assets) => {
      assets.addHook('onRequest', (request, reply, done) => {
        reply.headers(consoleSecurityHeaders(request))
        done()
      })
      await assets.register(fastifyStatic, {
        root: path.join(dir, 'assets'),
        prefix: '/assets/',
        // @fastify/swagger-ui registers its own copy; keep reply.sendFile to it.
        decorateReply: false,
        // Names carry a content hash: a changed file is a new name.
        maxAge: '365d',
        immutable: true,
      })
    })
  }

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    reply.status(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}`))

  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const pathname = request.url.split('?')[0]!
    if (isApiPath(pathname) || !wantsHtml(request) || pathname.startsWith('/assets/')) return notFound(request, reply)
    if (!page) return reply.status(404).send(errorBody('not_found', 'The web console is not built: run "npm run build"'))
    return reply.headers(consoleSecurityHeaders(request)).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page)
  })
}
