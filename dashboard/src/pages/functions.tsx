// Registered functions: their triggers (events, patterns with their filter, cron schedules), flow control,
// the events that cancel their runs, their recent success rate (completed vs failed of the last 100 runs),
// and whether they are paused, with Pause and Resume.
import { api, currentEnv, query } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { duration, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { FlowSummary } from './function-flow.tsx'
import { PauseControl } from './function-pause.tsx'

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

const functionColumns = (reload: () => void): Array<Column<any>> => [
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
  { header: 'State', cell: (f) => <PauseControl fn={f} onChange={reload} /> },
  {
    header: 'Triggers',
    cell: (f) => f.triggers.map((t: any, i: number) => <Trigger key={i} trigger={t} />),
  },
  { header: 'Flow control', class: 'flow', cell: (f) => <FlowSummary flow={f.flow_control} /> },
  {
    header: 'Cancelled by',
    cell: (f) =>
      f.cancel_on.length === 0 ? (
        <span class="muted">no event</span>
      ) : (
        f.cancel_on.map((rule: any, i: number) => <CancelRule key={i} rule={rule} />)
      ),
  },
  { header: 'Retries', cell: (f) => f.retries },
  { header: 'Timeout', cell: (f) => (f.timeout_ms === null ? '5 min (default)' : duration(f.timeout_ms)) },
  { header: 'Success (recent)', cell: (f) => successRate(f.rate) },
  { header: 'Registered', class: 'nowrap', cell: (f) => time(f.registered_at) },
]

/** An event name, linked to its events; a pattern (`shop/*`) is not a name the events list filters by. */
function EventName({ name }: { name: string }) {
  if (name.includes('*')) return <code>{name}</code>
  return (
    <a href={`#/events${query({ name })}`}>
      <code>{name}</code>
    </a>
  )
}

/** `TZ=Europe/Paris 0 9 * * 1-5` as the schedule and the zone it runs in (UTC unless named). */
function CronSchedule({ cron }: { cron: string }) {
  const [, zone, schedule] = /^\s*(?:TZ=(\S+)\s+)?(.+?)\s*$/.exec(cron) ?? [cron, undefined, cron]
  return (
    <div class="cron">
      cron <code>{schedule}</code> <span class="muted">({zone ?? 'UTC'})</span>
    </div>
  )
}

/** An event name or a pattern with its filter, or a cron schedule. */
function Trigger({ trigger }: { trigger: any }) {
  if (trigger.cron !== undefined) return <CronSchedule cron={trigger.cron} />
  return (
    <div>
      <EventName name={trigger.event} />
      {trigger.if !== undefined && <span class="muted mono"> if {trigger.if}</span>}
    </div>
  )
}

/** An event that ends a run: how it is matched to the run's event, and for how long after the run began. */
function CancelRule({ rule }: { rule: any }) {
  return (
    <div class="cancel-rule">
      <EventName name={rule.event} />
      {rule.match !== undefined && (
        <span class="muted">
          {' '}
          where <code>{rule.match}</code> matches
        </span>
      )}
      {rule.if !== undefined && <span class="muted mono"> if {rule.if}</span>}
      {rule.timeout_ms !== null && <span class="muted"> (within {duration(rule.timeout_ms)} of the start)</span>}
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
            rowId={(f) => f.id}
            columns={functionColumns(functions.reload)}
          />
        )
      )}
    </>
  )
}
