import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { EnvSchema } from '../../src/config/env-schema.js'

interface Row {
  names: string[]
  defaults: string
}

/** The rows of README's "Configuration" table. */
function readmeRows(): Row[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? ''
  return [...section.matchAll(/^\| (`[A-Z_]+`(?: \/ `[A-Z_]+`)*) \|([^|]*)\|/gm)].map((m) => ({
    names: [...m[1]!.matchAll(/`([A-Z_]+)`/g)].map((n) => n[1]!),
    defaults: m[2]!.trim(),
  }))
}

const declared = EnvSchema.properties as Record<string, { default?: unknown; description?: string }>

describe('the configuration schema', () => {
  it('declares exactly the variables of the README table', () => {
    const documented = readmeRows().flatMap((row) => row.names)
    expect([...documented].sort()).toEqual(Object.keys(declared).sort())
  })

  it('has the README defaults: literal ones equal, prose ones mean "no default in the schema"', () => {
    const mismatches: string[] = []
    for (const { names, defaults } of readmeRows()) {
      const literals = /^`[^`]*`(?: \/ `[^`]*`)*$/.test(defaults) ? [...defaults.matchAll(/`([^`]*)`/g)].map((m) => m[1]!) : undefined
      names.forEach((name, i) => {
        const schemaDefault = declared[name]!.default
        const readmeDefault = literals?.length === names.length ? literals[i] : undefined
        if ((schemaDefault === undefined ? undefined : String(schemaDefault)) !== readmeDefault) {
          mismatches.push(`${name}: README ${JSON.stringify(readmeDefault ?? defaults)}, schema ${JSON.stringify(schemaDefault)}`)
        }
      })
    }
    expect(mismatches).toEqual([])
  })

  it('describes every variable', () => {
    expect(Object.entries(declared).filter(([, schema]) => !schema.description).map(([name]) => name)).toEqual([])
  })

  it('produces a frozen Config, LOG_LEVEL included, and refuses an unknown log level naming it', () => {
    const config = loadConfig({ LOG_LEVEL: 'debug' })
    expect(Object.isFrozen(config)).toBe(true)
    expect(config.logLevel).toBe('debug')
    expect(loadConfig({}).logLevel).toBe('info')
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"$/)
  })

  it('keeps the messages of the decoding rules', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (err) {
        return (err as Error).message
      }
      return 'accepted'
    }
    expect(message({ PORT: '99999' })).toBe('PORT: must be between 0 and 65535, got 99999')
    expect(message({ PORT: '1.5' })).toBe('PORT: expected a whole number, got "1.5"')
    expect(message({ DEVICE_REQUEST_TIMEOUT_MS: '-5' })).toBe('DEVICE_REQUEST_TIMEOUT_MS: expected a number, got "-5"')
    expect(message({ CLOUD_JWT_EXPIRE_HOURS: '0' })).toBe('CLOUD_JWT_EXPIRE_HOURS: must be greater than 0, got 0')
    expect(message({ PLATFORM_AUTO_REGISTER: 'maybe' })).toBe('PLATFORM_AUTO_REGISTER: expected true or false, got "maybe"')
    expect(message({ CLOUD_JWT_SECRET: 'short' })).toBe('CLOUD_JWT_SECRET: must be at least 16 characters')
    expect(message({ PORT: ' 81 ', PLATFORM_AUTO_REGISTER: 'YES', HOST: '' })).toBe('accepted')
  })
})
