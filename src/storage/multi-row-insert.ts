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

/** A statement's text around its one values row, and how its placeholders are written. */
interface Template {
  head: string
  tail: string
  numbered: boolean
}

/**
 * A multi-row INSERT (or any statement with one list of values rows of plain placeholders, such as
 * an UPDATE … FROM (VALUES …)) whose SQL text Kysely builds once. Building and compiling it anew for
 * each batch of telemetry (200 rows) made storing it cost half as much CPU again, and a group of
 * production events (about 1,250 rows, a different count each time) 4.5 µs a row, while its SQL
 * text depends only on how many rows it has. So Kysely compiles it for one row; the text for n
 * rows is that row's placeholders repeated n times (numbered on PostgreSQL), which is checked
 * once against Kysely's own text for two and three rows (a statement where that does not hold
 * keeps Kysely's text); texts are cached by row count. The parameters are read from the rows in
 * `columns` order: `build` gets rows whose keys follow that order, which is the order Kysely
 * names the columns in. The first statement checks that its parameters are exactly the rows'
 * values in that order (a `build` that adds parameters, or puts other values first, throws
 * there, never silently).
 */
export class MultiRowInsert<Row extends object, Output = unknown> {
  private readonly texts = new Map<number, string>()
  /** undefined: not derived yet; null: Kysely's text per row count. */
  private template: Template | null | undefined

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
    if (this.template === undefined) this.template = this.derive(rows[0]!)
    const cached = this.texts.get(rows.length)
    if (cached !== undefined) return CompiledQuery.raw(cached, parameters) as CompiledQuery<Output>
    const text = this.template ? expand(this.template, this.columns.length, rows.length) : this.compile(rows, parameters).sql
    if (this.texts.size >= MAX_CACHED_TEXTS) this.texts.clear()
    this.texts.set(rows.length, text)
    return CompiledQuery.raw(text, parameters) as CompiledQuery<Output>
  }

  /** Kysely's statement for `rows`, checked to take `parameters` (the rows' values in column order). */
  private compile(rows: readonly Row[], parameters: readonly unknown[]): CompiledQuery<Output> {
    const compiled = this.build(rows.map((row) => this.inColumnOrder(row))).compile()
    if (compiled.parameters.length !== parameters.length || compiled.parameters.some((p, i) => !Object.is(p, parameters[i]))) {
      throw new Error(`the statement's parameters are not its rows' values in the order ${this.columns.join(', ')}: ${compiled.sql.slice(0, 200)}`)
    }
    return compiled
  }

  /** The text around the one values row of Kysely's statement for `row`, when repeating that row gives Kysely's text for more rows. */
  private derive(row: Row): Template | null {
    const one = this.compile([row], this.parameters([row])).sql
    const width = this.columns.length
    for (const numbered of [true, false]) {
      const values = placeholders(numbered, 0, width)
      const at = one.indexOf(values)
      if (at < 0 || one.indexOf(values, at + 1) >= 0) continue
      const template = { head: one.slice(0, at), tail: one.slice(at + values.length), numbered }
      const agrees = [2, 3].every((n) => this.compile(Array<Row>(n).fill(row), this.parameters(Array<Row>(n).fill(row))).sql === expand(template, width, n))
      return agrees ? template : null
    }
    return null
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

/** One row's placeholders, `(?, ?)` or, numbered from `first + 1`, `($1, $2)`. */
function placeholders(numbered: boolean, first: number, width: number): string {
  let text = '('
  for (let c = 0; c < width; c++) text += (c === 0 ? '' : ', ') + (numbered ? `$${first + c + 1}` : '?')
  return `${text})`
}

/** The statement's text for `rows` rows. */
function expand({ head, tail, numbered }: Template, width: number, rows: number): string {
  const values = Array.from({ length: rows }, (_, r) => placeholders(numbered, r * width, width))
  return head + values.join(', ') + tail
}
