import type { ReactNode } from 'react'

export interface Column<Row> {
  key: string
  header: ReactNode
  cell: (row: Row) => ReactNode
  /** Right-align numbers. */
  numeric?: boolean
}

export interface DataTableProps<Row> {
  /** The table's accessible name (contract §12), shown as its caption. */
  caption: string
  columns: readonly Column<Row>[]
  rows: readonly Row[]
  rowKey: (row: Row) => string
  empty?: ReactNode
  /** Rendered under the table: paging buttons and the like. */
  footer?: ReactNode
  /** A class for a row that stands out (what it means must also be said in its cells, not by style alone). */
  rowClassName?: (row: Row) => string | undefined
}

/** A real `<table>` named by its caption. */
export function DataTable<Row>({ caption, columns, rows, rowKey, empty, footer, rowClassName }: DataTableProps<Row>) {
  return (
    <div className="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" className={c.numeric ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && empty ? (
            <tr>
              <td colSpan={columns.length} className="empty">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)} className={rowClassName?.(row)}>
                {columns.map((c) => (
                  <td key={c.key} className={c.numeric ? 'num' : undefined}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
      {footer}
    </div>
  )
}
