import { CompiledQuery, type Compilable, type InsertType } from 'kysely'

/** Columns an INSERT into a table of row type `Table` names: all but those the database generates. */
export type InsertColumn<Table> = { [K in keyof Table]-?: undefined extends InsertType<Table[K]> ? never : K }[keyof Table] & string

/** One row to insert into a table of row type `Table`: exactly its insert columns. */
export type InsertRow<Table> = { [K in InsertColumn<Table>]: InsertType<Table[K]> }

type Missing<Table, C extends readonly string[]> = Exclude<InsertColumn<Table>, C[number]>

/**
 * The insert columns of `Table`, in the order given; fails to compile when one is missing
 * (the error names it) or unknown. Curried so that `Table` is explicit and the list inferred.
 * @example const POINT_COLUMNS = insertColumns<PointTable>()('series_id', 'ts', 'value')
 */
export const insertColumns =
  <Table>() =>
  <const C extends readonly InsertColumn<Table>[]>(...columns: C & ([Missing<Table, C>] extends [never] ? unknown : { missing: Missing<Table, C> })): C => {
    if (new Set(columns).size !== columns.length) throw new Error(`duplicate insert column in ${columns.join(', ')}`)
    return columns
  }

/** Rows per statement by default: with a few columns each, far below both engines' parameter limits. */
const DEFAULT_MAX_ROWS = 1000
const MAX_CACHED_TEXTS = 256

/**
 * A multi-row INSERT that Kysely builds once per row count. Building and compiling it anew for
 * each batch of telemetry (200 rows) made storing it cost half as much CPU again, while its SQL
 * text depends only on how many rows it has. So the text is cached by row count and the parameters are read from
 * the rows in `columns` order: `build` gets rows whose keys follow that order, which is the
 * order Kysely names the columns in. The first statement of each row count checks that its
 * parameters are exactly the rows' values in that order (a `build` that adds parameters, or
 * puts other values first, throws there, never silently).
 */
export class MultiRowInsert<Row extends object, Output = unknown> {
  private readonly texts = new Map<number, string>()

  /** `columns`: every key of `Row`, e.g. from `insertColumns`. */
  constructor(
    private readonly columns: readonly (keyof Row & string)[],
    private readonly build: (rows: Row[]) => Compilable<Output>,
    private readonly maxRows = DEFAULT_MAX_ROWS,
  ) {}

  /** The statements inserting `rows`, `maxRows` at most each, in order. */
  statements(rows: readonly Row[]): CompiledQuery<Output>[] {
    if (rows.length <= this.maxRows) return rows.length === 0 ? [] : [this.statement(rows)]
    const statements: CompiledQuery<Output>[] = []
    for (let start = 0; start < rows.length; start += this.maxRows) statements.push(this.statement(rows.slice(start, start + this.maxRows)))
    return statements
  }

  private statement(rows: readonly Row[]): CompiledQuery<Output> {
    const parameters = this.parameters(rows)
    const text = this.texts.get(rows.length)
    if (text !== undefined) return CompiledQuery.raw(text, parameters) as CompiledQuery<Output>
    const compiled = this.build(rows.map((row) => this.inColumnOrder(row))).compile()
    if (compiled.parameters.length !== parameters.length || compiled.parameters.some((p, i) => !Object.is(p, parameters[i]))) {
      throw new Error(`the statement's parameters are not its rows' values in the order ${this.columns.join(', ')}: ${compiled.sql.slice(0, 200)}`)
    }
    if (this.texts.size >= MAX_CACHED_TEXTS) this.texts.clear()
    this.texts.set(rows.length, compiled.sql)
    return compiled
  }

  private parameters(rows: readonly Row[]): unknown[] {
    const { columns } = this
    const width = columns.length
    const parameters: unknown[] = new Array(rows.length * width)
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!
      for (let c = 0; c < width; c++) parameters[r * width + c] = row[columns[c]!]
    }
    return parameters
  }

  private inColumnOrder(row: Row): Row {
    return Object.fromEntries(this.columns.map((column) => [column, row[column]])) as Row
  }
}
