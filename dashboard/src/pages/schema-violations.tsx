// A name's schema violations over the last 24 hours: counts per hour (a chart, from the stored
// events that warn mode kept with their violations) and the latest events, each with its violations.
import { useMemo } from 'preact/hooks'
import { Chart, COLORS } from '../ui/chart.tsx'
import { ErrorMessage, Loading } from '../ui/common.tsx'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { bucketName } from '../ui/events-chart.tsx'
import { schemaViolations, type ViolationSample } from './schema-traffic-api.ts'

const BUCKET_MS = 3_600_000

const SAMPLE_COLUMNS: Array<Column<ViolationSample>> = [
  {
    header: 'Event',
    class: 'name',
    cell: (s) => <a href={`#/events/${encodeURIComponent(s.internal_id)}`}>{s.event_id}</a>,
  },
  { header: 'Received', class: 'nowrap', cell: (s) => time(s.received_at) },
  {
    header: 'Violations',
    cell: (s) => (
      <ul class="violations">
        {s.violations.map((v) => (
          <li key={v}>
            <code class="break">{v}</code>
          </li>
        ))}
      </ul>
    ),
  },
]

/** `refresh` changing loads the counts again (a version was pushed). */
export function SchemaViolationsPanel(props: { name: string; env: string; refresh: number }) {
  const violations = useApi(
    () => schemaViolations(props.name, props.env, { bucketMs: BUCKET_MS }),
    [props.name, props.env, props.refresh],
  )
  const v = violations.data
  const chart = useMemo(
    () =>
      v && {
        x: v.series.map((b) => b.t / 1000),
        series: [{ label: 'violating events', values: v.series.map((b) => b.count), color: COLORS[3] }],
      },
    [v],
  )
  const caption = `Violating events per ${bucketName(BUCKET_MS)}, the last 24 hours`
  return (
    <section id="schema-violations" class="panel" aria-labelledby="violations-title">
      <h2 id="violations-title">Violations</h2>
      <p class="muted small-text">
        Events stored in <code>warn</code> mode with what they broke (<code>block</code> refuses them instead).
      </p>
      <ErrorMessage error={violations.error} />
      {violations.loading && !v ? (
        <Loading />
      ) : (
        v &&
        chart && (
          <>
            <figure class="chart" id="violations-chart" data-total={v.total}>
              <figcaption>
                {caption}: {v.total.toLocaleString()}
                {v.truncated && ' (partly counted: the newest events of the range)'}
              </figcaption>
              {v.total === 0 ? (
                <p class="muted chart-empty">No violations in this range.</p>
              ) : (
                <Chart
                  kind="bar"
                  time
                  integer
                  x={chart.x}
                  series={chart.series}
                  height={120}
                  label={`${caption}: ${v.total}`}
                />
              )}
            </figure>
            {v.samples.length > 0 && (
              <>
                <h3>Latest violations</h3>
                <DataTable
                  id="violation-samples"
                  caption="Latest events with violations"
                  rows={v.samples}
                  rowKey={(s) => s.internal_id}
                  rowId={(s) => s.internal_id}
                  columns={SAMPLE_COLUMNS}
                  cards
                />
              </>
            )}
          </>
        )
      )}
    </section>
  )
}
