import type { FastifyRequest } from 'fastify'

/**
 * The console's Content-Security-Policy. Everything it loads is its own (scripts, styles,
 * fonts, the API and the event stream, all same-origin); `data:` images are the machines'
 * camera frames (`frameSource`). No inline script or style element exists in the build, and
 * React's `style` props go through the CSSOM, which `style-src` does not govern.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** One year: the usual HSTS lifetime. Subdomains are left alone (they may be other services). */
const HSTS = 'max-age=31536000'

/**
 * Headers of the console's page and assets. `Strict-Transport-Security` only on a request that
 * came over HTTPS: directly, or per `X-Forwarded-Proto` from a trusted balancer (TRUST_PROXY),
 * which `request.protocol` reads.
 */
export function consoleSecurityHeaders(request: FastifyRequest): Record<string, string> {
  return {
    'content-security-policy': CONSOLE_CSP,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...(request.protocol === 'https' ? { 'strict-transport-security': HSTS } : {}),
  }
}
