import { describe, expect, it } from 'vitest'
import { selectorOf, withMachineFilter } from './machine-filters'

describe('machines list filters in the URL', () => {
  it('sets one filter, keeps the other, and goes back to the first page', () => {
    const params = new URLSearchParams('q=pnp-1&after=pnp-199')
    expect(withMachineFilter(params, 'selector', 'site=sz,line in (l1,l2)').toString()).toBe('q=pnp-1&selector=site%3Dsz%2Cline+in+%28l1%2Cl2%29')
    expect(withMachineFilter(new URLSearchParams('selector=site%3Dsz&after=x'), 'q', 'pnp-2').toString()).toBe('selector=site%3Dsz&q=pnp-2')
    expect(params.toString()).toBe('q=pnp-1&after=pnp-199')
  })

  it('removes a filter set to nothing', () => {
    expect(withMachineFilter(new URLSearchParams('q=pnp-1&selector=site%3Dsz'), 'selector', '').toString()).toBe('q=pnp-1')
    expect(withMachineFilter(new URLSearchParams('q=pnp-1&selector=site%3Dsz'), 'q', '').toString()).toBe('selector=site%3Dsz')
  })

  it('reads the selector with spaces around it dropped', () => {
    expect(selectorOf(new URLSearchParams('selector=+site%3Dsz+'))).toBe('site=sz')
    expect(selectorOf(new URLSearchParams(''))).toBe('')
  })
})
