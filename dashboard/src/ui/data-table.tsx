// The dashboard's one list table: a labelled, keyboard-scrollable region around a table with a
// caption for screen readers, column headers, and rows that may open a page when clicked (the
// row's main link stays the keyboard way in). `cards`: on a phone each row is a card (style.css).
import type { ComponentChildren } from 'preact'

export interface Column<Row> {
  header: string
  /** The header is read by screen readers only (an actions or state column). */
  hideHeader?: boolean
  cell(row: Row): ComponentChildren
  /** Class of the cell: `name` (wraps long names), `nowrap`, `mono clip`, … */
  class?: string
}

export interface DataTableProps<Row> {
  id: string
  /** What the table lists: its caption and the label of its scroll region. */
  caption: string
  columns: Array<Column<Row>>
  rows: Row[]
  rowKey(row: Row, index: number): string
  /** `data-id` of each row, for tests and links. */
  rowId?(row: Row): string
  /** Clicking anywhere on a row but its links and buttons goes here. */
  rowHref?(row: Row): string
  cards?: boolean
}

const interactive = (target: EventTarget | null) => (target as Element | null)?.closest?.('a, button, input, select')

export function DataTable<Row>(props: DataTableProps<Row>) {
  const { columns, rowHref } = props
  return (
    // Focusable: on a phone a wide table scrolls sideways, and keyboard users must be able to scroll
    // it (axe's scrollable-region-focusable); the region's label says what the focus lands on.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: see above
    // biome-ignore lint/a11y/useSemanticElements: a <section> would add a landmark per table
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
      <table id={props.id} class={props.cards ? 'list cards' : 'list'}>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" class={c.class?.includes('num') ? 'num' : undefined}>
                {c.hideHeader ? <span class="sr-only">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, index) => {
            const href = rowHref?.(row)
            return (
              <tr
                key={props.rowKey(row, index)}
                data-id={props.rowId?.(row)}
                class={href ? 'clickable' : undefined}
                onClick={
                  href
                    ? (e) => {
                        if (!interactive(e.target)) location.hash = href
                      }
                    : undefined
                }
              >
                {columns.map((c) => (
                  <td key={c.header} class={c.class}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}
