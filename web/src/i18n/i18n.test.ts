import { describe, expect, it } from 'vitest'
import { initialLanguage } from './i18n'
import en from './locales/en.json'
import zhCN from './locales/zh-CN.json'

/** Every quoted accessible name of contract §12, exact in English. */
const CONTRACT_NAMES = [
  'Username', 'Password', 'Sign in', 'Machines', 'Firmware', 'Platform', 'Audit', 'Sign out', 'Language',
  'Machine', 'Status', 'Version', 'Last heartbeat', 'Online', 'Offline', 'Bind a machine', 'Bind',
  'System', 'Task', 'Hardware', 'Vision', 'Cameras', 'Debug', 'Position', 'Step',
  'X+', 'X-', 'Y+', 'Y-', 'Z+', 'Z-', 'R+', 'R-', 'Pump', 'Valve', 'Light',
  'Placement file', 'Parsed components', 'Designator', 'Value', 'Package', 'X', 'Y', 'Rotation', 'Side',
  'Create order', 'Orders', 'Start task', 'Task progress', 'Pause', 'Resume', 'Stop', 'Camera up', 'Camera down',
  'Command', 'Send', 'Firmware image', 'Manifest', 'Upload', 'Releases', 'Uploaded', 'Active', 'Downloads', 'Activate',
  'Devices', 'Device', 'Model', 'Last seen', 'Add device', 'Device id', 'Add', 'Operation log',
  'Telemetry', 'Key', 'Range', 'Logs', 'Level', 'Load more', 'Send command', 'Action', 'Commands', 'Id', 'Attempts',
  'Clear logs', 'Clear commands', 'Confirm', 'Audit log', 'Time', 'Actor', 'Target',
  'Start rollout', 'Release', 'Stages', 'Max failure ratio', 'Start', 'Rollouts', 'State', 'Stage', 'Progress',
  'Rollout progress', 'Rollout machines', 'Abort', 'Unknown', 'Reload', 'Live', 'Reconnecting',
]

type Tree = { [key: string]: string | Tree }
const flatten = (tree: Tree, prefix = ''): Record<string, string> =>
  Object.fromEntries(
    Object.entries(tree).flatMap(([k, v]) => (typeof v === 'string' ? [[`${prefix}${k}`, v]] : Object.entries(flatten(v, `${prefix}${k}.`)))),
  )

describe('console translations', () => {
  const english = flatten(en)
  const chinese = flatten(zhCN)

  it('has every accessible name of contract §12 in the English locale', () => {
    const values = new Set(Object.values(english))
    expect(CONTRACT_NAMES.filter((name) => !values.has(name))).toEqual([])
  })

  it('translates every English key into Simplified Chinese, and nothing more', () => {
    expect(Object.keys(chinese).sort()).toEqual(Object.keys(english).sort())
    expect(Object.entries(chinese).filter(([, v]) => v.trim() === '')).toEqual([])
  })

  it('keeps the same {{placeholders}} in both languages', () => {
    const holes = (s: string) => (s.match(/\{\{\w+\}\}/g) ?? []).sort()
    for (const [key, text] of Object.entries(english)) expect(holes(chinese[key]!), key).toEqual(holes(text))
  })

  it('starts in Chinese for a zh browser, else English, and a remembered choice wins', () => {
    expect(initialLanguage(null, ['zh-TW', 'en'])).toBe('zh-CN')
    expect(initialLanguage(null, ['zh'])).toBe('zh-CN')
    expect(initialLanguage(null, ['en-GB', 'zh-CN'])).toBe('en')
    expect(initialLanguage('en', ['zh-CN'])).toBe('en')
    expect(initialLanguage('zh-CN', ['en'])).toBe('zh-CN')
    expect(initialLanguage('fr', ['fr'])).toBe('en')
  })
})
