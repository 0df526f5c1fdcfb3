import type { FastifySchemaValidationError } from 'fastify'
import { AppError } from '../errors.js'

/**
 * A schema error formatter for batches: the 400's message and `index` name the first bad
 * element of the array at `arrayPath` (`/records`, or '' for a bare array body).
 */
export function indexedErrors(arrayPath: string, noun: string) {
  const element = new RegExp(`^${arrayPath}/(\\d+)(.*)$`)
  return (errors: FastifySchemaValidationError[], dataVar: string): Error => {
    const first = errors[0]!
    const extra = first.params && typeof first.params.additionalProperty === 'string' ? `: ${first.params.additionalProperty}` : ''
    const match = element.exec(first.instancePath)
    if (!match) return new AppError('bad_request', `Invalid ${dataVar}: ${dataVar}${first.instancePath} ${first.message}${extra}`)
    const index = Number(match[1])
    const field = match[2] ? `${match[2].slice(1)} ` : ''
    return new AppError('bad_request', `${noun} ${index}: ${field}${first.message}${extra}`, { index })
  }
}
