export interface ServerEvent {
  id?: string
  event: string
  data: string
}

/**
 * Incremental Server-Sent Events parser (the WHATWG rules the console needs): feed it
 * decoded text as it arrives; it returns the complete events and remembers `retry:`.
 */
export class SseParser {
  private buffer = ''
  private data: string[] = []
  private event = ''
  private id: string | undefined
  retry: number | undefined

  push(chunk: string): ServerEvent[] {
    this.buffer += chunk
    const out: ServerEvent[] = []
    let newline: number
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline)
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1
      this.buffer = this.buffer.slice(newline + width)
      if (line === '') {
        if (this.data.length > 0) out.push({ id: this.id, event: this.event || 'message', data: this.data.join('\n') })
        this.data = []
        this.event = ''
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? '' : line.slice(colon + 1)
      if (value.startsWith(' ')) value = value.slice(1)
      if (field === 'data') this.data.push(value)
      else if (field === 'event') this.event = value
      else if (field === 'id') this.id = value
      else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value)
    }
    return out
  }
}
