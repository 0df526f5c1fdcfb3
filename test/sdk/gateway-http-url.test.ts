import { describe, expect, it } from 'vitest'
import { gatewayHttpUrl } from '@fleetgate/device-agent'

const PATH = '/api/v1/firmware/slave/releases/rel-2/system.bin'

describe('gatewayHttpUrl', () => {
  it.each([
    ['ws://10.0.0.5:8080', `http://10.0.0.5:8080${PATH}`],
    ['wss://fleet.example.com', `https://fleet.example.com${PATH}`],
    ['http://10.0.0.5:8080/', `http://10.0.0.5:8080${PATH}`],
    ['https://fleet.example.com/edge/', `https://fleet.example.com/edge${PATH}`],
    ['wss://fleet.example.com:8443/edge/api/v1/device-link', `https://fleet.example.com:8443/edge${PATH}`],
  ])('resolves an offer path against %s', (base, expected) => {
    expect(gatewayHttpUrl(base, PATH)).toBe(expected)
  })

  it('keeps a query and never leaves the gateway host', () => {
    expect(gatewayHttpUrl('https://gw/x', '/a/b?c=1')).toBe('https://gw/x/a/b?c=1')
    expect(gatewayHttpUrl('https://gw', '//evil.example.com/system.bin')).toBe('https://gw/system.bin')
  })
})
