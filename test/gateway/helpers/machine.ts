import type { RequestHandler } from './raw-device.js'

export const OPERATOR = { username: 'operator', password: 'operator-pw' }

/**
 * A machine that accepts device login for OPERATOR (401 for a wrong password, 403 for the
 * user "locked") and answers every other request with its path.
 */
export const machine: RequestHandler = (frame) => {
  if (frame.path !== '/auth/login') return { status: 200, data: { path: frame.path, user: frame.user.username } }
  const { username, password } = frame.body as { username: string; password: string }
  if (username === 'locked') return { status: 403, data: { error: 'forbidden', message: 'account locked' } }
  if (username !== OPERATOR.username || password !== OPERATOR.password) return { status: 401, data: { error: 'unauthorized', message: 'bad credentials' } }
  return { status: 200, data: { user: { username, role: 'operator', display_name: 'Operator' } } }
}
