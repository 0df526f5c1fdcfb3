import { Type } from '@sinclair/typebox'

/** Contract §2: identifiers in paths and bodies. 1–64 of `A–Z a–z 0–9 . _ : -`, not `.` or `..`. */
export const ID_PATTERN = '^(?!\\.\\.?$)[A-Za-z0-9._:-]{1,64}$'
const idRegex = new RegExp(ID_PATTERN)

export const isIdentifier = (value: unknown): value is string => typeof value === 'string' && idRegex.test(value)

/** TypeBox schema for an identifier (use in params and bodies). */
export const Id = (description = 'Identifier: 1–64 of A–Z a–z 0–9 . _ : -') =>
  Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 64, description })
