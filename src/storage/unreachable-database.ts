import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely'
import type { CompiledQuery, DatabaseIntrospector, DialectAdapter, Kysely, QueryCompiler } from 'kysely'
import { AppError } from '../errors.js'

/** Socket errors of a connection that could not be made or was lost (`err.code`). */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * PostgreSQL SQLSTATEs saying the server is going away or not taking sessions yet:
 * 57P01 admin_shutdown (smart/fast stop), 57P02 crash_shutdown (immediate stop, a crashed
 * backend), 57P03 cannot_connect_now (starting up, recovering), and class 08, connection exceptions.
 */
const SERVER_GOING_AWAY: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03'])

/**
 * What pg says when a connection could not be had or broke, without a code: the pool's connect
 * time-out, the client's own time-out, a socket that closed under a query, a client that is
 * no longer usable.
 */
const LOST_CONNECTION = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Connection closed)/

/**
 * Whether `err` says the database cannot be reached right now, as opposed to a statement that
 * failed (a constraint, a syntax error): a connection refused, reset or timed out, a server
 * shutting down or starting up. The one classification of connection-level errors (PostgreSQL).
 */
export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_GOING_AWAY.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true
  if (LOST_CONNECTION.test(err.message)) return true
  // Node's happy-eyeballs connect (localhost → ::1 and 127.0.0.1) fails with every attempt's error.
  if (err instanceof AggregateError) return err.errors.length > 0 && err.errors.every(isConnectionFailure)
  return false
}

/** The error a request or a job sees while the database cannot be reached (503, with `Retry-After`). */
export function databaseUnavailable(cause: unknown): AppError {
  const error = new AppError('service_unavailable', 'The database cannot be reached right now; retry shortly')
  error.cause = cause
  return error
}

/**
 * True for a 503 `service_unavailable`: a dependency could not be reached (the error
 * `databaseUnavailable` makes, and NATS's when the bus is down): nothing was done, try again later.
 */
export const isDependencyUnavailable = (err: unknown): err is AppError => err instanceof AppError && err.code === 'service_unavailable'

const translate = (err: unknown): never => {
  throw isConnectionFailure(err) ? databaseUnavailable(err) : err
}

/**
 * Wraps a dialect so that every connection-level error its driver raises (acquiring a
 * connection, a query, begin/commit/rollback) comes out as `databaseUnavailable`: routes answer
 * 503 `service_unavailable` through the one error handler, and background writers can tell an
 * outage from a bad item. Any other error passes through untouched.
 */
export function reportingUnreachableAsUnavailable(dialect: Dialect): Dialect {
  return {
    createAdapter: (): DialectAdapter => dialect.createAdapter(),
    createQueryCompiler: (): QueryCompiler => dialect.createQueryCompiler(),
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => dialect.createIntrospector(db),
    createDriver: (): Driver => new UnreachableAsUnavailableDriver(dialect.createDriver()),
  }
}

/**
 * The driver hands out its own connections and expects them back (pg releases a pooled client
 * through the connection object), so the wrapped connection remembers its original.
 */
class UnreachableAsUnavailableDriver implements Driver {
  private readonly originals = new WeakMap<DatabaseConnection, DatabaseConnection>()

  constructor(private readonly driver: Driver) {}

  init(): Promise<void> {
    return this.driver.init().catch(translate)
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const original = await this.driver.acquireConnection().catch(translate)
    const wrapped: DatabaseConnection = {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> => original.executeQuery<R>(query).catch(translate),
      streamQuery: <R>(query: CompiledQuery, chunkSize: number, options?: Parameters<DatabaseConnection['streamQuery']>[2]) => original.streamQuery<R>(query, chunkSize, options),
    }
    this.originals.set(wrapped, original)
    return wrapped
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(this.original(connection), settings).catch(translate)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(this.original(connection)).catch(translate)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(this.original(connection)).catch(translate)
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.savepoints('savepoint').call(this.driver, this.original(connection), name, compile).catch(translate)
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.savepoints('rollbackToSavepoint').call(this.driver, this.original(connection), name, compile).catch(translate)
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.savepoints('releaseSavepoint').call(this.driver, this.original(connection), name, compile).catch(translate)
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(this.original(connection))
  }

  destroy(): Promise<void> {
    return this.driver.destroy()
  }

  private savepoints(method: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint') {
    const run = this.driver[method]
    if (!run) throw new Error(`the database driver does not support ${method}`)
    return run
  }

  private original(connection: DatabaseConnection): DatabaseConnection {
    return this.originals.get(connection) ?? connection
  }
}
