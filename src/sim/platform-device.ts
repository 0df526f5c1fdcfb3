import { systemClock, type Clock } from './machine/clock.js'

export type SimLog = (level: 'info' | 'warn' | 'error', message: string) => void

export interface PlatformDeviceIntervals {
  /** Heartbeat period; the platform's offline threshold is 60 s. Default 10 s. */
  heartbeatMs?: number
  /** Telemetry sampling period. Default 2 s. */
  sampleMs?: number
  /** Telemetry and log upload period. Default 10 s. */
  flushMs?: number
  /** Command queue polling period. Default 3 s. */
  pollMs?: number
}

export interface PlatformDeviceOptions {
  /** Server base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string
  deviceId: string
  model?: string
  firmwareVersion?: string
  /** With it, the device first adds itself through the admin API to obtain its device token. */
  consoleToken?: string
  /** A token kept from an earlier run, sent as `X-Device-Token`. */
  deviceToken?: string
  /** Called when `device/add` issues a new token, so the caller can keep it. */
  onDeviceToken?: (token: string) => void
  intervals?: PlatformDeviceIntervals
  fetch?: typeof fetch
  clock?: Clock
  log?: SimLog
}

interface PlatformCommand {
  id: string
  action: string
  params: Record<string, unknown>
}

type CommandOutcome = { success: true; result: Record<string, unknown> } | { success: false; error: string }

const MAX_BUFFERED = 1000
const REQUEST_TIMEOUT_MS = 5000
const LOG_LEVEL_LETTER = { info: 'I', warn: 'W', error: 'E', debug: 'D' } as const

/**
 * An HTTP-polling IoT device (contract §7): heartbeats, telemetry and ESP-IDF style log batches,
 * command polling with acknowledgements, and a binding code. Each step is a public method so tests
 * can drive it without timers; `start()` runs them periodically.
 */
export class PlatformDevice {
  readonly deviceId: string
  deviceToken: string | undefined
  expression = 'neutral'
  bindCode: string | undefined
  private readonly options: PlatformDeviceOptions
  private readonly fetch: typeof fetch
  private readonly clock: Clock
  private readonly log: SimLog
  private bootAt: number
  private readonly telemetry: { ts: number; values: Record<string, number | boolean | string> }[] = []
  private readonly logLines: string[] = []
  private readonly timers: NodeJS.Timeout[] = []
  private readonly inFlight = new Set<Promise<unknown>>()

  constructor(options: PlatformDeviceOptions) {
    this.options = options
    this.deviceId = options.deviceId
    this.deviceToken = options.deviceToken
    this.fetch = options.fetch ?? globalThis.fetch
    this.clock = options.clock ?? systemClock
    this.log = options.log ?? (() => undefined)
    this.bootAt = this.clock.now()
    this.logLine('info', 'boot', `firmware ${this.firmwareVersion} starting`)
    this.logLine('info', 'wifi', 'connected to AP, got ip')
  }

  get firmwareVersion(): string {
    return this.options.firmwareVersion ?? '1.0.3'
  }

  get model(): string {
    return this.options.model ?? 'fleetgate-sim-node'
  }

  /** Adds the device through the admin API when a console token is known; 409 (already there) is fine. */
  async provision(): Promise<void> {
    if (!this.options.consoleToken) return
    const res = await this.request('POST', '/api/admin/device/add', {
      json: { device_id: this.deviceId, model: this.model },
      headers: { 'x-console-token': this.options.consoleToken },
    })
    if (res.status === 201) {
      const body = (await res.json()) as { device_token?: string }
      if (body.device_token) {
        this.deviceToken = body.device_token
        this.options.onDeviceToken?.(body.device_token)
      }
      this.log('info', `${this.deviceId}: added to the platform`)
    } else if (res.status === 409) {
      this.log('info', `${this.deviceId}: already on the platform${this.deviceToken ? '' : ' (no device token kept; sending none)'}`)
    } else {
      this.log('warn', `${this.deviceId}: device/add answered ${res.status}`)
    }
  }

  /** Returns the number of commands waiting, as the platform reports it. */
  async heartbeat(): Promise<number> {
    const res = await this.request('POST', '/v1/device/heartbeat', {
      json: { device_id: this.deviceId, firmware_version: this.firmwareVersion, model: this.model, uptime_s: this.uptimeS(), rssi: this.rssi() },
    })
    if (!res.ok) {
      this.log('warn', `${this.deviceId}: heartbeat answered ${res.status}`)
      return 0
    }
    const body = (await res.json()) as { pending_commands?: number }
    return body.pending_commands ?? 0
  }

  /** Takes one telemetry sample into the upload buffer. */
  sample(): void {
    const t = (this.clock.now() - this.bootAt) / 1000
    this.telemetry.push({
      ts: this.clock.now(),
      values: {
        temperature: Math.round((24 + 3 * Math.sin(t / 300)) * 10) / 10,
        humidity: Math.round(45 + 10 * Math.sin(t / 900)),
        rssi: this.rssi(),
        heap_free: 180_000 - (Math.floor(t) % 5000),
        uptime_s: this.uptimeS(),
        expression: this.expression,
      },
    })
    if (this.telemetry.length > MAX_BUFFERED) this.telemetry.splice(0, this.telemetry.length - MAX_BUFFERED)
    if (this.telemetry.length % 5 === 1) this.logLine('info', 'sensor', `temperature ${this.telemetry.at(-1)!.values.temperature} C`)
  }

  /** Uploads buffered telemetry and logs. Kept for retry on network errors and 5xx; dropped when refused (4xx). */
  async flush(): Promise<void> {
    if (this.telemetry.length > 0) {
      const records = this.telemetry.slice()
      const res = await this.request('POST', `/v1/device/${this.deviceId}/telemetry/batch`, { json: { records } })
      if (res.ok || res.status < 500) this.telemetry.splice(0, records.length)
      if (!res.ok) this.log('warn', `${this.deviceId}: telemetry batch answered ${res.status}`)
    }
    if (this.logLines.length > 0) {
      const lines = this.logLines.slice()
      const res = await this.request('POST', `/v1/device/${this.deviceId}/logs/batch`, {
        text: lines.join('\n'),
      })
      if (res.ok || res.status < 500) this.logLines.splice(0, lines.length)
      if (!res.ok) this.log('warn', `${this.deviceId}: log batch answered ${res.status}`)
    }
  }

  /** Fetches pending commands, runs them and acknowledges each; returns how many ran. */
  async pollCommands(limit = 10): Promise<number> {
    const res = await this.request('GET', `/v1/device/${this.deviceId}/commands?limit=${limit}`)
    if (!res.ok) {
      this.log('warn', `${this.deviceId}: command poll answered ${res.status}`)
      return 0
    }
    const { commands = [] } = (await res.json()) as { commands?: PlatformCommand[] }
    for (const command of commands) {
      const outcome = await this.execute(command)
      const ack = outcome.success ? { id: command.id, success: true, result: outcome.result } : { id: command.id, success: false, error: outcome.error }
      const ackRes = await this.request('POST', `/v1/device/${this.deviceId}/commands/ack`, { json: ack })
      if (!ackRes.ok) this.log('warn', `${this.deviceId}: ack of ${command.id} answered ${ackRes.status}`)
    }
    return commands.length
  }

  async fetchBindCode(): Promise<string | undefined> {
    const res = await this.request('GET', `/v1/device/${this.deviceId}/bind/code`)
    if (!res.ok) return undefined
    const { code } = (await res.json()) as { code?: string }
    this.bindCode = code
    if (code) this.log('info', `${this.deviceId}: binding code ${code}`)
    return code
  }

  /** Provisions, fetches a binding code, then runs every loop until `stop()`. Failures are logged and retried. */
  start(): void {
    const intervals = this.options.intervals ?? {}
    const every = (ms: number, step: () => Promise<unknown> | void) => {
      const run = () => {
        if (this.inFlight.size > 8) return // the server is slow; skip rather than pile up
        const p = Promise.resolve()
          .then(step)
          .catch((err: Error) => this.log('warn', `${this.deviceId}: ${err.message}`))
        this.inFlight.add(p)
        void p.finally(() => this.inFlight.delete(p))
      }
      this.timers.push(setInterval(run, ms))
      return run
    }
    const beat = every(intervals.heartbeatMs ?? 10_000, async () => {
      if ((await this.heartbeat()) > 0) await this.pollCommands()
    })
    every(intervals.sampleMs ?? 2000, () => this.sample())
    every(intervals.flushMs ?? 10_000, () => this.flush())
    every(intervals.pollMs ?? 3000, () => this.pollCommands())
    const boot = this.provision()
      .then(() => beat())
      .then(() => this.fetchBindCode())
      .catch((err: Error) => this.log('warn', `${this.deviceId}: ${err.message}`))
    this.inFlight.add(boot)
    void boot.finally(() => this.inFlight.delete(boot))
  }

  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer)
    await Promise.allSettled([...this.inFlight])
  }

  private async execute(command: PlatformCommand): Promise<CommandOutcome> {
    const p = command.params ?? {}
    this.logLine('info', 'cmd', `${command.action} ${JSON.stringify(p)}`)
    switch (command.action) {
      case 'ping':
        return { success: true, result: { pong: true, uptime_s: this.uptimeS() } }
      case 'bleep':
        return { success: true, result: { beeped_ms: Number(p.duration ?? 0) } }
      case 'reboot':
        this.bootAt = this.clock.now()
        this.logLine('warn', 'system', 'rebooting on command')
        return { success: true, result: { rebooting: true } }
      case 'expression':
        this.expression = String(p.expression)
        return { success: true, result: { expression: this.expression } }
      case 'sync_time': {
        const res = await this.request('POST', `/v1/device/${this.deviceId}/time/sync`, { json: { device_time: this.clock.now() } })
        if (!res.ok) return { success: false, error: `time sync answered ${res.status}` }
        const { offset_ms } = (await res.json()) as { offset_ms?: number }
        return { success: true, result: { offset_ms: offset_ms ?? 0 } }
      }
      case 'ota_check': {
        const query = new URLSearchParams({ device_id: this.deviceId, version: this.firmwareVersion })
        const res = await this.request('GET', `/svc/upgrade/check?${query}`)
        if (!res.ok) return { success: false, error: `upgrade check answered ${res.status}` }
        const { update = false, release } = (await res.json()) as { update?: boolean; release?: unknown }
        return { success: true, result: { update, ...(release !== undefined && { release }) } }
      }
      default:
        if (command.action.startsWith('hid_')) return { success: true, result: { sent: true, action: command.action } }
        return { success: false, error: `unsupported action ${command.action}` }
    }
  }

  private async request(method: string, path: string, body: { json?: unknown; text?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...body.headers }
    if (this.deviceToken) headers['x-device-token'] = this.deviceToken
    let payload: string | undefined
    if (body.json !== undefined) {
      headers['content-type'] = 'application/json'
      payload = JSON.stringify(body.json)
    } else if (body.text !== undefined) {
      headers['content-type'] = 'text/plain; charset=utf-8'
      payload = body.text
    }
    const url = this.options.baseUrl.replace(/\/+$/, '') + path
    return this.fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  }

  /** ESP-IDF log format: `I (1234) wifi: connected`, time in ms since boot. */
  private logLine(level: keyof typeof LOG_LEVEL_LETTER, tag: string, message: string): void {
    this.logLines.push(`${LOG_LEVEL_LETTER[level]} (${this.clock.now() - this.bootAt}) ${tag}: ${message}`)
    if (this.logLines.length > MAX_BUFFERED) this.logLines.splice(0, this.logLines.length - MAX_BUFFERED)
  }

  private uptimeS(): number {
    return Math.floor((this.clock.now() - this.bootAt) / 1000)
  }

  private rssi(): number {
    return -55 - (Math.floor(this.clock.now() / 7000) % 12)
  }
}
