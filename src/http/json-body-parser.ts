import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

const MAX_DEPTH = 64

/**
 * Contract §2 JSON hygiene: empty body, nesting deeper than 64, a `__proto__` key or a
 * U+0000 anywhere → 400. Every JSON body of the contract is an object or an array, so a
 * top-level `null`, string, number or boolean is refused here, once for every surface
 * (schemas that allow an omitted body as `null` must never see a sent `null`). Replaces Fastify's JSON parser; the text/plain parser is removed
 * so a non-JSON body on a JSON endpoint is 415 (routes that take text add their own).
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonStrict(body as string))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
}

export function parseJsonStrict(text: string): unknown {
  if (text.trim() === '') throw new AppError('bad_request', 'Empty JSON body')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new AppError('bad_request', `Malformed JSON: ${(err as Error).message}`)
  }
  if (typeof value !== 'object' || value === null) throw new AppError('bad_request', `A JSON body must be an object, not ${value === null ? 'null' : typeof value}`)
  checkValue(value, 1)
  return value
}

function checkValue(value: unknown, depth: number): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new AppError('bad_request', 'U+0000 is not allowed in strings')
    return
  }
  if (typeof value !== 'object' || value === null) return
  if (depth > MAX_DEPTH) throw new AppError('bad_request', `JSON nested deeper than ${MAX_DEPTH} levels`)
  if (Array.isArray(value)) {
    for (const item of value) checkValue(item, depth + 1)
    return
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') throw new AppError('bad_request', '"__proto__" keys are not allowed')
    if (key.includes('\u0000')) throw new AppError('bad_request', 'U+0000 is not allowed in keys')
    checkValue((value as Record<string, unknown>)[key], depth + 1)
  }
}
