import { readdirSync, readFileSync } from 'node:fs'

/** The command line a process runs now (Linux: /proc/<pid>/cmdline), as its arguments. */
export function commandLineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
}

/** The arguments a Node process got before its script `script`: its Node and V8 flags. */
export function nodeFlagsBefore(commandLine: string[], script: string): string[] {
  const at = commandLine.findIndex((arg) => arg === script || arg.endsWith(`/${script}`))
  if (at < 0) throw new Error(`${script} is not on the command line ${commandLine.join(' ')}`)
  return commandLine.slice(1, at)
}

/** The processes of the process group `pgid` whose command line mentions `text` (Linux: /proc). */
export function processesOfGroup(pgid: number, text: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
      if (pgrp === pgid && commandLineOf(Number(entry)).join(' ').includes(text)) found.push(Number(entry))
    } catch {
      // the process is gone
    }
  }
  return found
}
