import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { render } from '@testing-library/react'
import type { ReactElement } from 'react'
import { setupI18n } from '../../i18n/i18n'
import type { PlatformMeta } from './platform-types'

/** Renders inside a fresh query client (no retries) with English strings. */
export function renderWithClient(ui: ReactElement) {
  setupI18n('en')
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } })
  return { client, ...render(<QueryClientProvider client={client}>{ui}</QueryClientProvider>) }
}

export { stubFetch, type RecordedRequest } from '../../testing/stub-fetch'

/** meta.actions as GET /api/admin/meta answers them (key lists shortened). */
export const META: PlatformMeta = {
  success: true,
  expressions: ['neutral', 'happy', 'sad'],
  hid_keys: { A: 4, B: 5, C: 6, ENTER: 40, LCTRL: 224 },
  actions: [
    { action: 'bleep', params: { duration: { minimum: 1, maximum: 10000, description: 'ms', type: 'integer' } } },
    { action: 'ping', params: {} },
    { action: 'expression', params: { expression: { description: 'One of meta.expressions', type: 'string', enum: ['neutral', 'happy', 'sad'] } } },
    { action: 'hid_text', params: { text: { minLength: 1, maxLength: 1024, type: 'string' } } },
    {
      action: 'hid_combo',
      params: { keys: { minItems: 1, maxItems: 6, type: 'array', items: { description: 'A name of meta.hid_keys', type: 'string', enum: ['A', 'B', 'C', 'ENTER', 'LCTRL'] } } },
    },
    {
      action: 'hid_click',
      params: { button: { type: 'string', enum: ['left', 'right', 'middle'] }, hold: { minimum: 0, maximum: 10000, description: 'ms', type: 'integer' } },
    },
    {
      action: 'hid_scroll',
      params: {
        wheel: {
          description: '−127…127, not 0',
          anyOf: [
            { minimum: -127, maximum: -1, type: 'integer' },
            { minimum: 1, maximum: 127, type: 'integer' },
          ],
        },
      },
    },
  ],
}
