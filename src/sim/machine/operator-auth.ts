import { Type } from '@sinclair/typebox'
import { sameSecret } from '../../auth/secrets.js'
import { ok, RouteError, type RouteTable } from '@fleetgate/device-agent'
import { parseBody } from './validate-body.js'

export interface Operator {
  username: string
  password: string
  role?: string
}

const LoginBody = Type.Object({ username: Type.String({ minLength: 1, maxLength: 128 }), password: Type.String({ minLength: 1, maxLength: 128 }) })

/** `POST /auth/login`: the machine's own operator accounts; the gateway binds the user to the machine on success. */
export function registerOperatorAuthRoutes(routes: RouteTable, operators: readonly Operator[]): void {
  routes.post('/auth/login', ({ body }) => {
    const { username, password } = parseBody(LoginBody, body)
    // Compare against every account so timing does not reveal which usernames exist.
    let match: Operator | undefined
    for (const operator of operators) {
      const userOk = sameSecret(username, operator.username)
      const passwordOk = sameSecret(password, operator.password)
      if (userOk && passwordOk) match = operator
    }
    if (!match) throw new RouteError(401, 'invalid_credentials', 'wrong username or password')
    return ok({ user: { id: match.username, username: match.username, display_name: match.username, role: match.role ?? 'operator' } })
  })
}
