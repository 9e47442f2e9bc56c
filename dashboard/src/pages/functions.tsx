// Registered functions with their recent success rate (completed vs failed of the last 100 runs).
import { api, currentEnv, query } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { duration, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'

const RECENT = 100

async function load(env: string) {
  const { data: functions } = await api('GET', `/v1/functions${query({ env })}`)
  const rates = await Promise.all(
    functions.map(async (f: any) => {
      const { data: runs } = await api(
        'GET',
        `/v1/runs${query({ function: `${f.app_id}-${f.function_id}`, env: f.env, limit: RECENT })}`,
      )
      const done = runs.filter((r: any) => r.status === 'completed' || r.status === 'failed')
      return {
        total: runs.length,
        done: done.length,
        completed: done.filter((r: any) => r.status === 'completed').length,
      }
    }),
  )
  return functions.map((f: any, i: number) => ({ ...f, rate: rates[i] }))
}

const successRate = (rate: { done: number; completed: number }) =>
  rate.done === 0 ? (
    <span class="muted">no finished runs</span>
  ) : (
    `${Math.round((100 * rate.completed) / rate.done)}% of ${rate.done} run${rate.done === 1 ? '' : 's'}`
  )

const FUNCTION_COLUMNS: Array<Column<any>> = [
  {
    header: 'Function',
    class: 'name',
    cell: (f) => (
      <>
        <a href={`#/runs${query({ function: `${f.app_id}-${f.function_id}` })}`}>{f.name ?? f.function_id}</a>
        <div class="muted mono">
          {f.app_id}-{f.function_id}
        </div>
      </>
    ),
  },
  { header: 'Env', cell: (f) => f.env },
  {
    header: 'Triggers',
    cell: (f) => f.triggers.map((t: any) => <Trigger key={t.event ?? t.cron} trigger={t} />),
  },
  { header: 'Retries', cell: (f) => f.retries },
  { header: 'Timeout', cell: (f) => (f.timeout_ms === null ? '5 min (default)' : duration(f.timeout_ms)) },
  { header: 'Success (recent)', cell: (f) => successRate(f.rate) },
  { header: 'Registered', class: 'nowrap', cell: (f) => time(f.registered_at) },
]

/** An event name (linked to its events), a pattern with its filter, or a cron schedule. */
function Trigger({ trigger }: { trigger: any }) {
  if (trigger.cron !== undefined)
    return (
      <div>
        <code>cron {trigger.cron}</code>
      </div>
    )
  const name = trigger.event.includes('*') ? (
    <code>{trigger.event}</code>
  ) : (
    <a href={`#/events${query({ name: trigger.event })}`}>
      <code>{trigger.event}</code>
    </a>
  )
  return (
    <div>
      {name}
      {trigger.if !== undefined && <span class="muted mono"> if {trigger.if}</span>}
    </div>
  )
}

export function FunctionsPage() {
  const env = currentEnv.value
  const functions = useApi(() => load(env), [env])
  return (
    <>
      <h1 tabIndex={-1}>Functions</h1>
      <ErrorMessage error={functions.error} />
      {functions.loading && !functions.data ? (
        <Loading />
      ) : functions.data?.length === 0 ? (
        <Empty>
          <p>
            No functions registered{env ? ` in ${env}` : ''}. Serve some with{' '}
            <code>npm start -- --functions ./functions.ts</code> (see the README's Functions section).
          </p>
        </Empty>
      ) : (
        functions.data && (
          <DataTable
            id="functions"
            caption="Registered functions"
            rows={functions.data}
            rowKey={(f) => `${f.env}/${f.id}`}
            columns={FUNCTION_COLUMNS}
          />
        )
      )}
    </>
  )
}
