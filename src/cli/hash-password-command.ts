import { hashPassword } from '../auth/password-hash.js'

/** What the command reads and writes; the real streams unless a test passes its own. */
export interface HashPasswordIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

const USAGE = `usage: fleetgate hash-password

Reads a password from standard input (the first line, without its newline) or, on a terminal,
asks for it without echo, and prints a password_hash for CLOUD_AUTH_USERS:
  CLOUD_AUTH_USERS='{"ops": {"password_hash": "<printed hash>", "role": "user"}}'`

/** Longest password a login accepts (contract §3: 1–128 characters). */
const MAX_LENGTH = 128

/**
 * `fleetgate hash-password`: prints the PHC argon2id string of a password. Exit 0; 2 for an empty
 * or too long password, or an unknown argument.
 */
export async function runHashPasswordCommand(argv: string[], io: HashPasswordIo = process): Promise<number> {
  if (argv.length > 0) {
    const help = argv[0] === '-h' || argv[0] === '--help'
    ;(help ? io.stdout : io.stderr).write(`${help ? '' : `fleetgate hash-password: unexpected argument ${argv[0]}\n`}${USAGE}\n`)
    return help ? 0 : 2
  }
  const password = io.stdin.isTTY && io.stdin.setRawMode ? await promptWithoutEcho(io) : await firstLine(io.stdin)
  if (password === undefined) return 130
  if (password.length === 0) {
    io.stderr.write('fleetgate hash-password: the password is empty\n')
    return 2
  }
  if (password.length > MAX_LENGTH) {
    io.stderr.write(`fleetgate hash-password: the password is longer than ${MAX_LENGTH} characters (a login could not send it)\n`)
    return 2
  }
  io.stdout.write(`${await hashPassword(password)}\n`)
  return 0
}

/** The first line of a piped input, without its line ending; the whole input when it has none. */
function firstLine(stdin: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const finish = () => {
      stdin.off('data', onData)
      stdin.off('end', finish)
      stdin.off('error', reject)
      stdin.pause()
      resolve(text.split('\n')[0]!.replace(/\r$/, ''))
    }
    const onData = (chunk: Buffer | string) => {
      text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
      if (text.includes('\n')) finish()
    }
    stdin.on('data', onData)
    stdin.once('end', finish)
    stdin.once('error', reject)
    stdin.resume()
  })
}

/** Asks on the terminal with echo off; undefined after Ctrl-C. */
function promptWithoutEcho(io: HashPasswordIo): Promise<string | undefined> {
  const { stdin } = io
  io.stderr.write('Password: ')
  stdin.setRawMode!(true)
  return new Promise((resolve) => {
    let text = ''
    const done = (result: string | undefined) => {
      stdin.off('data', onData)
      stdin.setRawMode!(false)
      stdin.pause()
      io.stderr.write('\n')
      resolve(result)
    }
    const onData = (chunk: Buffer | string) => {
      for (const char of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done(text)
        if (char === '\u0003') return done(undefined)
        if (char === '\u007f' || char === '\b') text = [...text].slice(0, -1).join('')
        else if (char >= ' ') text += char
      }
    }
    stdin.on('data', onData)
    stdin.resume()
  })
}
