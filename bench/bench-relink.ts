/**
 * A fleet of bare device links (bench-raw-link.ts) that can all drop and re-link at once, as
 * after a server restart: the console bench runs it in a child process (its CPU then does not
 * count against the page), the browser journey in-process with a few hundred links.
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { RawLink, sourceAddress } from './bench-raw-link.js'

const HERE = fileURLToPath(import.meta.url)
/** Links being opened at once (the server lets 1,000 sockets wait for their registration). */
const OPENING_AT_ONCE = 500

export const fleetDeviceId = (prefix: string, i: number) => `${prefix}${String(i).padStart(4, '0')}`

export class LinkFleet {
  private links: (RawLink | undefined)[] = []
  private readonly url: URL

  constructor(
    linkUrl: string,
    private readonly prefix: string,
    readonly count: number,
  ) {
    this.url = new URL(linkUrl)
  }

  /**
   * Links every machine `which` selects (all by default) reporting `version`; resolves once each
   * has its `registered` answer and sent one heartbeat, with the seconds it took.
   */
  async open(version: string, which: (i: number) => boolean = () => true): Promise<number> {
    const started = performance.now()
    const todo = Array.from({ length: this.count }, (_, i) => i).filter(which)
    let next = 0
    let failed = 0
    const opener = async () => {
      while (next < todo.length) {
        if (!(await this.linkOne(todo[next++]!, version))) failed++
      }
    }
    await Promise.all(Array.from({ length: Math.min(OPENING_AT_ONCE, todo.length) }, opener))
    if (failed > 0) throw new Error(`${failed} of ${todo.length} links failed to register`)
    return (performance.now() - started) / 1000
  }

  /** Every link drops at once (sockets destroyed, as a crashing or restarting server would see them go). */
  closeAll(): void {
    for (const link of this.links) link?.socket.destroy()
    this.links = []
  }

  private linkOne(i: number, version: string): Promise<boolean> {
    const id = fleetDeviceId(this.prefix, i)
    return new Promise<boolean>((resolve) => {
      const link: RawLink = new RawLink(this.url, sourceAddress(i), (text) => {
        if ((JSON.parse(text) as { type: string }).type !== 'registered') return
        link.send(JSON.stringify({ type: 'heartbeat', status: { state: 'idle' } }))
        resolve(true)
      })
      this.links[i] = link
      link.socket.once('upgraded', () => link.send(JSON.stringify({ type: 'register', device_id: id, key: `relink-key-${id}-000000`, hostname: id, version })))
      link.socket.on('error', () => undefined)
      link.socket.on('close', () => resolve(false))
    })
  }
}

export interface ForkedFleet {
  /** Links every machine with `version`; resolves with the seconds it took. */
  open(version: string): Promise<number>
  /** Every link drops at once and links again with `version`; resolves with the seconds the re-linking took. */
  relink(version: string): Promise<number>
  stop(): Promise<void>
}

/** A LinkFleet in a child process. */
export async function forkFleet(linkUrl: string, prefix: string, count: number): Promise<ForkedFleet> {
  const child = fork(HERE, ['--fleet-child', linkUrl, prefix, String(count)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const ask = async (message: { op: 'open' | 'relink'; version: string }) => {
    child.send(message)
    const [answer] = (await once(child, 'message')) as [{ seconds?: number; error?: string }]
    if (answer.error) throw new Error(answer.error)
    return answer.seconds!
  }
  return {
    open: (version) => ask({ op: 'open', version }),
    relink: (version) => ask({ op: 'relink', version }),
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

if (process.argv[2] === '--fleet-child') {
  const [, , , linkUrl, prefix, count] = process.argv
  const fleet = new LinkFleet(linkUrl!, prefix!, Number(count))
  process.on('message', (message: { op: 'open' | 'relink'; version: string }) => {
    if (message.op === 'relink') fleet.closeAll()
    fleet.open(message.version).then(
      (seconds) => process.send!({ seconds }),
      (err: Error) => process.send!({ error: err.message }),
    )
  })
  process.on('SIGTERM', () => {
    fleet.closeAll()
    process.exit(0)
  })
}
