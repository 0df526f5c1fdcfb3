import { limitViolation, type Position } from './axes.js'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'

export interface SerialLine {
  ts: number
  direction: 'tx' | 'rx'
  line: string
}

const LOG_SIZE = 200
const CONTROLLER_VERSION = 'Grbl 1.1h-pnp [sim]'

/**
 * The link to the motion controller: what was sent and answered, and a GRBL-like controller that
 * answers G-code (`G0 X10 Y20`, `G28`, `M114`, `?`, `$I`) with `ok` or `error:<n>`.
 */
export class SerialConsole {
  readonly log: SerialLine[] = []
  txCount = 0
  rxCount = 0
  errorCount = 0
  lastCommand: string | null = null

  constructor(private readonly machine: PickAndPlaceMachine) {}

  send(line: string): { response: string[]; ok: boolean } {
    this.record('tx', line)
    this.txCount++
    this.lastCommand = line
    const response = this.answer(line.trim())
    for (const reply of response) this.record('rx', reply)
    this.rxCount += response.length
    const ok = response.at(-1) === 'ok'
    if (!ok) this.errorCount++
    return { response, ok }
  }

  tail(limit: number): SerialLine[] {
    return this.log.slice(-limit)
  }

  private record(direction: 'tx' | 'rx', line: string): void {
    this.log.push({ ts: toSeconds(this.machine.clock.now()), direction, line })
    if (this.log.length > LOG_SIZE) this.log.splice(0, this.log.length - LOG_SIZE)
  }

  private answer(line: string): string[] {
    const { axes } = this.machine
    const p = axes.position()
    const word = line.split(/\s+/)[0]!.toUpperCase()
    if (line === '?') return [`<${axes.moving() ? 'Run' : 'Idle'}|MPos:${p.x.toFixed(3)},${p.y.toFixed(3)},${p.z.toFixed(3)},${p.r.toFixed(3)}|FS:0,0>`, 'ok']
    if (word === '$I') return [`[VER:${CONTROLLER_VERSION}]`, `[OPT:V,15,128]`, 'ok']
    if (word === 'M114') return [`X:${p.x.toFixed(3)} Y:${p.y.toFixed(3)} Z:${p.z.toFixed(3)} R:${p.r.toFixed(3)}`, 'ok']
    if (word === 'G28' || word === '$H') {
      axes.moveTo({ x: 0, y: 0, z: 0, r: 0 }, this.machine.settings.get<number>('speed_mm_s'))
      return ['ok']
    }
    if (word === 'G0' || word === 'G1') return this.linearMove(line)
    if (/^[GM]\d+(\.\d+)?$/.test(word) || /^\$\w*/.test(word)) return ['ok']
    return ['error:20'] // GRBL: unsupported or invalid g-code command
  }

  private linearMove(line: string): string[] {
    if (this.machine.busyReason()) return ['error:9'] // GRBL: g-code locked out during alarm or jog state
    const here = this.machine.axes.position()
    const target: Position = { ...here }
    let feed = this.machine.settings.get<number>('speed_mm_s')
    for (const [, letter, value] of line.matchAll(/([XYZRF])\s*(-?\d+(?:\.\d+)?)/gi)) {
      const axis = letter!.toLowerCase()
      if (axis === 'f') feed = Number(value) / 60 // F is mm/min
      else target[axis as keyof Position] = Number(value)
    }
    if (limitViolation(target) || !(feed > 0)) return ['error:15'] // GRBL: travel exceeded
    this.machine.axes.moveTo(target, feed)
    return ['ok']
  }
}
