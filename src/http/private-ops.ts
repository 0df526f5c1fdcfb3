import { BlockList, isIPv4 } from 'node:net'
import type { FastifyRequest } from 'fastify'
import { notFound } from '../errors.js'
import type { PrefixGuard } from './prefix-guards.js'

/** What `OPS_ENDPOINTS=private` keeps to private peers: the API reference and the metrics. */
export const PRIVATE_OPS_PREFIXES = ['/docs', '/openapi.json', '/metrics'] as const

/** Loopback, RFC 1918 and link-local ranges (IPv4 and IPv6 unique-local): addresses no internet client has. */
const PRIVATE = new BlockList()
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4')
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4')
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4')
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4')
PRIVATE.addSubnet('169.254.0.0', 16, 'ipv4')
PRIVATE.addAddress('::1', 'ipv6')
PRIVATE.addSubnet('fc00::', 7, 'ipv6')
PRIVATE.addSubnet('fe80::', 10, 'ipv6')

/** True for a loopback or private-range address (an IPv4-mapped IPv6 address counts as its IPv4 one). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped) return PRIVATE.check(mapped, 'ipv4')
  if (isIPv4(address)) return PRIVATE.check(address, 'ipv4')
  try {
    return PRIVATE.check(address, 'ipv6')
  } catch {
    return false
  }
}

/**
 * `OPS_ENDPOINTS=private`: `/docs`, `/openapi.json` and `/metrics` answer 404 (as if absent)
 * unless the client address is loopback or private. The client address is `request.ip`: the
 * peer's, or the one a trusted balancer forwards (TRUST_PROXY). Behind a balancer that is not
 * trusted every request seems to come from it (a private address): set TRUST_PROXY, or have the
 * balancer refuse these paths (docs/deploy.md).
 */
export function privateOpsGuards(): PrefixGuard[] {
  const check = async (request: FastifyRequest) => {
    if (!isPrivateAddress(request.ip)) throw notFound(`No route ${request.method} ${request.url.split('?')[0]}`)
  }
  return PRIVATE_OPS_PREFIXES.map((prefix) => ({ prefix, check }))
}
