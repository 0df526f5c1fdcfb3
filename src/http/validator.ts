import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

/**
 * Bodies are validated strictly (a "5" is not a number: contract §2 wants 400 on a wrong
 * type); path and query strings are coerced, since they are text by nature. Unknown
 * properties are never silently removed: schemas that forbid them reject them.
 */
export function installValidator(app: FastifyInstance): void {
  const make = (coerceTypes: boolean | 'array') => {
    const ajv = new Ajv.default({ coerceTypes, removeAdditional: false, useDefaults: true, allErrors: false, strict: false })
    addFormats.default(ajv)
    return ajv
  }
  const strict = make(false)
  const coercing = make('array')
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema))
}
