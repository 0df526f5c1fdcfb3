import { badRequest } from '../../errors.js'
import { MAX_LOG_BATCH, MAX_MESSAGE_CHARS, MAX_TAG_CHARS, type LogEntry, type LogLevel } from './log-schemas.js'

export type ParsedLine = Pick<LogEntry, 'message' | 'tag'> & { level: LogLevel }

const BRACKET_LEVELS: Record<string, LogLevel> = { debug: 'debug', info: 'info', warn: 'warn', warning: 'warn', error: 'error' }
const ESP_LEVELS: Record<string, LogLevel> = { E: 'error', W: 'warn', I: 'info', D: 'debug', V: 'debug' }

// `[LEVEL] message`
const BRACKET = /^\[([A-Za-z]+)\]\s?(.*)$/
// ESP-IDF: `E (1234) tag: message`; the time is since boot (or wall clock hh:mm:ss.mmm), never epoch.
const ESP_IDF = /^([EWIDV]) \(([0-9:.]+)\) ([^:]*): ?(.*)$/
// Colour codes ESP-IDF adds with CONFIG_LOG_COLORS.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g

/** One `text/plain` line, or null when it matches neither accepted form. */
export function parseLogLine(raw: string): ParsedLine | null {
  const line = raw.replace(ANSI, '').trimEnd()
  const bracket = BRACKET.exec(line)
  if (bracket) {
    const level = BRACKET_LEVELS[bracket[1]!.toLowerCase()]
    return level ? { level, message: bracket[2]! } : null
  }
  const esp = ESP_IDF.exec(line)
  if (esp) {
    const tag = esp[3]!.trim()
    return { level: ESP_LEVELS[esp[1]!]!, message: esp[4]!, ...(tag ? { tag } : {}) }
  }
  return null
}

/** Every non-blank line as an entry (at most 1000); 400 naming the first bad line (1-based) rejects the whole batch. */
export function parseLogText(text: string): ParsedLine[] {
  const entries: ParsedLine[] = []
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!
    if (raw.trim() === '') continue
    const line = i + 1
    if (raw.includes('\u0000')) throw badRequest(`line ${line}: U+0000 is not allowed`, { line })
    const entry = parseLogLine(raw)
    if (!entry) throw badRequest(`line ${line}: expected "[LEVEL] message" or "E (1234) tag: message"`, { line })
    if (entry.message.length > MAX_MESSAGE_CHARS) throw badRequest(`line ${line}: message longer than ${MAX_MESSAGE_CHARS} characters`, { line })
    if (entry.tag !== undefined && entry.tag.length > MAX_TAG_CHARS) throw badRequest(`line ${line}: tag longer than ${MAX_TAG_CHARS} characters`, { line })
    entries.push(entry)
    if (entries.length > MAX_LOG_BATCH) throw badRequest(`more than ${MAX_LOG_BATCH} lines in one batch`)
  }
  return entries
}
