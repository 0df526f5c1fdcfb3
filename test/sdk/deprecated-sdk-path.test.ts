import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as agent from '@fleetgate/device-agent'
import * as sdk from '../../src/sdk/index.js'

describe('fleetgate/sdk (deprecated)', () => {
  it('still exports the device agent package, the same objects, for one more release', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, string> }
    expect(manifest.exports['./sdk']).toBe('./dist/src/sdk/index.js')
    expect(Object.keys(sdk).sort()).toEqual(Object.keys(agent).sort())
    expect(sdk.DeviceAgent).toBe(agent.DeviceAgent)
    expect(sdk.RouteTable).toBe(agent.RouteTable)
    expect(sdk.ok).toBe(agent.ok)
  })
})
