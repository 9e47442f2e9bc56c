// The SQL console of the Insights page (distributed mode): one read-only query over the ClickHouse
// tables (POST /v1/insights/query), the example queries of docs/clickhouse.md one click away, the
// answer as a table and as a line or bar chart of its numeric columns.
import examples from 'sluice:clickhouse-examples'
import { useMemo, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Chart, COLORS, type ChartSeries } from '../ui/chart.tsx'
import { ErrorMessage } from '../ui/common.tsx'
import { DataTable } from '../ui/data-table.tsx'

export interface SqlInfo {
  clickhouse_version: string
  database: string
  max_rows: number
  max_result_bytes: number
  timeout_seconds: number
}

interface SqlResult {
  columns: Array<{ name: string; type: string }>
  rows: unknown[][]
  truncated: boolean
  elapsed_ms: number
  rows_read: number
}

const NUMERIC = /^(Nullable\()?(U?Int\d+|Float\d+|Decimal)/
const TIME = /^(Nullable\()?(DateTime|Date)\b/
const MAX_SERIES = COLORS.length
const MAX_CELL = 200

/** ClickHouse writes DateTime in the server's time zone (UTC on Sluice's test servers) as `YYYY-MM-DD hh:mm:ss`. */
const seconds = (v: unknown) => Date.parse(`${String(v).replace(' ', 'T')}${String(v).length > 10 ? 'Z' : ''}`) / 1000

/**
 * What to draw: x is the first time column, else the first text column (categories); the numeric
 * columns are the series, or, with one numeric column and a second text column, each value of that
 * column is a series (hour, name, events → one line per name).
 */
export function chartOf(result: SqlResult): Omit<Parameters<typeof Chart>[0], 'kind' | 'label'> | null {
  const cols = result.columns.map((c, i) => ({ ...c, i }))
  const numeric = cols.filter((c) => NUMERIC.test(c.type))
  if (numeric.length === 0 || result.rows.length === 0) return null
  const x = cols.find((c) => TIME.test(c.type)) ?? cols.find((c) => !NUMERIC.test(c.type))
  const group = numeric.length === 1 ? cols.find((c) => c !== x && !NUMERIC.test(c.type)) : undefined
  const time = x !== undefined && TIME.test(x.type)
  const keyOf = (row: unknown[]) => (x ? String(row[x.i]) : '')
  const keys = x ? [...new Set(result.rows.map(keyOf))] : result.rows.map((_, i) => String(i + 1))
  if (time) keys.sort((a, b) => seconds(a) - seconds(b))
  const at = new Map(keys.map((k, i) => [k, i]))
  const rowIndex = (row: unknown[], i: number) => (x ? at.get(keyOf(row))! : i)
  let series: ChartSeries[]
  if (group) {
    const totals = new Map<string, number>()
    for (const row of result.rows)
      totals.set(String(row[group.i]), (totals.get(String(row[group.i])) ?? 0) + Number(row[numeric[0].i]))
    const names = [...totals.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, MAX_SERIES)
      .map(([n]) => n)
    series = names.map((name, k) => ({ label: name, values: new Array(keys.length).fill(null), color: COLORS[k] }))
    result.rows.forEach((row, i) => {
      const s = series[names.indexOf(String(row[group.i]))]
      if (s) s.values[rowIndex(row, i)] = ((s.values[rowIndex(row, i)] as number) ?? 0) + Number(row[numeric[0].i])
    })
  } else {
    series = numeric
      .slice(0, MAX_SERIES)
      .map((c, k) => ({ label: c.name, values: new Array(keys.length).fill(null), color: COLORS[k] }))
    result.rows.forEach((row, i) => {
      numeric.slice(0, MAX_SERIES).forEach((c, k) => {
        series[k].values[rowIndex(row, i)] = Number(row[c.i])
      })
    })
  }
  return time ? { x: keys.map(seconds), time: true, series } : { x: keys.map((_, i) => i), categories: keys, series }
}

const cellText = (v: unknown) => {
  const text = v === null ? 'NULL' : typeof v === 'string' ? v : JSON.stringify(v)
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL)}…` : text
}

export function SqlConsole({ info }: { info: SqlInfo }) {
  const [sql, setSql] = useState(examples[0]?.sql ?? 'SELECT name, count() AS events FROM events FINAL GROUP BY name')
  const [state, setState] = useState<{ result?: SqlResult; error?: Error; running?: boolean }>({})
  const [kind, setKind] = useState<'auto' | 'line' | 'bar'>('auto')
  const run = async (text = sql) => {
    setState({ running: true })
    try {
      const { data } = await api<{ data: SqlResult }>('POST', '/v1/insights/query', { sql: text })
      setState({ result: data })
    } catch (error) {
      setState({ error: error as Error })
    }
  }
  const chart = useMemo(() => (state.result ? chartOf(state.result) : null), [state.result])
  const result = state.result
  const drawn = kind === 'auto' ? (chart?.time ? 'line' : 'bar') : kind
  return (
    <section class="panel" aria-labelledby="sql-title">
      <h2 id="sql-title">SQL</h2>
      <p class="muted small-text">
        Read-only queries on ClickHouse {info.clickhouse_version}, database <code>{info.database}</code> (tables as in
        docs/clickhouse.md: <code>events</code>, <code>runs</code>, <code>webhook_requests</code>). At most{' '}
        {info.max_rows.toLocaleString()} rows and {info.timeout_seconds} s a query; every environment is visible.
      </p>
      <fieldset class="examples">
        <legend class="sr-only">Example queries</legend>
        {examples.map((e) => (
          <button
            key={e.title}
            type="button"
            class="secondary small"
            onClick={() => {
              setSql(e.sql)
              void run(e.sql)
            }}
          >
            {e.title}
          </button>
        ))}
      </fieldset>
      <form
        id="sql-form"
        onSubmit={(e) => {
          e.preventDefault()
          void run()
        }}
      >
        <label for="sql" class="label">
          Query
        </label>
        <textarea
          id="sql"
          class="sql"
          spellcheck={false}
          rows={Math.min(14, Math.max(4, sql.split('\n').length + 1))}
          value={sql}
          onInput={(e) => setSql(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault()
              void run()
            }
          }}
        />
        <div class="filter-actions">
          <button type="submit" id="run-sql" disabled={state.running}>
            {state.running ? 'Running…' : 'Run'}
          </button>
          <span class="muted small-text">Ctrl+Enter</span>
        </div>
      </form>
      <div id="sql-result" aria-live="polite">
        <ErrorMessage error={state.error} />
        {result && (
          <>
            <p class="muted small-text" id="sql-summary">
              {result.rows.length.toLocaleString()} row{result.rows.length === 1 ? '' : 's'}
              {result.truncated && ` (cut at ${info.max_rows.toLocaleString()}: more matched)`} in {result.elapsed_ms}{' '}
              ms, {result.rows_read.toLocaleString()} rows read
            </p>
            {chart && (
              <figure class="chart" id="sql-chart">
                <figcaption>
                  <span>{chart.series.map((s) => s.label).join(', ')}</span>
                  <fieldset class="chart-kind">
                    <legend class="sr-only">Chart type</legend>
                    {(['line', 'bar'] as const).map((k) => (
                      <button
                        key={k}
                        type="button"
                        class="small secondary"
                        aria-pressed={drawn === k}
                        onClick={() => setKind(k)}
                      >
                        {k === 'line' ? 'Line' : 'Bars'}
                      </button>
                    ))}
                  </fieldset>
                </figcaption>
                <Chart
                  kind={drawn}
                  {...chart}
                  label={`Chart of the query result: ${chart.series.map((s) => s.label).join(', ')}`}
                />
              </figure>
            )}
            {result.rows.length > 0 && (
              <DataTable<unknown[]>
                id="sql-rows"
                caption="Query result"
                rows={result.rows}
                rowKey={(_row, index) => String(index)}
                columns={result.columns.map((c, i) => ({
                  header: c.name,
                  class: NUMERIC.test(c.type) ? 'num' : 'name',
                  cell: (row) => cellText(row[i]),
                }))}
              />
            )}
          </>
        )}
      </div>
    </section>
  )
}
