// One run: its step timeline (each step's start, duration, attempts, what a pause waited for,
// output or error with stack), what it waits for, what cancelled it or why it was skipped, a batch
// run's events, and the function's output or final error. Refreshes while the run is not finished.
import { useEffect, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Badge, ErrorMessage, Loading } from '../ui/common.tsx'
import { JsonView } from '../ui/json-view.tsx'
import { duration, ms, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { CancelRun } from './run-cancel.tsx'
import { CancelCause, PauseText, pauseState } from './run-pause.tsx'
import { BatchEvents, SkipText } from './run-flow.tsx'
import { runDuration } from './runs.tsx'

const REFRESH_MS = 1_000
/** A waiting run may wait for hours: asked for less often, unless a cancel was just requested. */
const WAITING_REFRESH_MS = 5_000
const UNFINISHED = new Set(['queued', 'running', 'waiting'])

function RunError({ error }: { error: any }) {
  return (
    <div class="run-error">
      <p class="error">
        <strong>{error.name}</strong>
        {error.code ? ` (${error.code})` : ''}: {error.message}
      </p>
      {error.stack && (
        <details>
          <summary>Stack</summary>
          <pre class="stack">{error.stack}</pre>
        </details>
      )}
    </div>
  )
}

/** Steps in order, each starting where the previous ended (steps run one at a time). */
function timeline(run: any) {
  let start = ms(run.started_at) ?? ms(run.queued_at)!
  const end = ms(run.ended_at) ?? Date.now()
  const total = Math.max(1, end - start)
  const origin = start
  return run.steps.map((s: any) => {
    // A step still waiting has not ended: it lasts until now, or until the run was cancelled.
    const ended = s.status === 'waiting' ? end : ms(s.ended_at)!
    const item = {
      ...s,
      start,
      duration: Math.max(0, ended - start),
      offset: (start - origin) / total,
      width: Math.max(0.01, (ended - start) / total),
    }
    start = ended
    // A pause the run was cancelled in is over: shown as cancelled, not as still waiting.
    if (s.status === 'waiting' && run.status !== 'waiting') item.status = 'cancelled'
    return item
  })
}

export function RunPage({ id }: { id: string }) {
  const run = useApi(() => api('GET', `/v1/runs/${id}`), [id])
  const [action, setAction] = useState<{ ok?: string; error?: Error }>({})
  const r = run.data?.data
  // The attempt a retry goes on with: the store shows the run as failed a moment longer, so ask until it has it.
  const [retryAttempts, setRetryAttempts] = useState(0)
  const unfinished = r && UNFINISHED.has(r.status)
  const polling = unfinished || (r && r.attempts < retryAttempts)
  const refreshMs = r?.status === 'waiting' && !action.ok ? WAITING_REFRESH_MS : REFRESH_MS
  useEffect(() => {
    if (!polling) return
    const timer = setInterval(run.reload, refreshMs)
    return () => clearInterval(timer)
  }, [polling, refreshMs])
  if (run.loading && !r) return <Loading />
  if (!r)
    return (
      <>
        <h1 tabIndex={-1}>Run</h1>
        <ErrorMessage error={run.error} />
        <p>
          <a href="#/runs">Back to runs</a>
        </p>
      </>
    )
  const steps = timeline(r)
  const retry = () =>
    api('POST', `/v1/runs/${id}/retry`).then(
      (retried) => {
        setRetryAttempts(retried.data.attempts)
        setAction({ ok: 'Retrying from the failed step; completed steps keep their results.' })
        run.reload()
      },
      (error) => setAction({ error }),
    )
  const cancel = () =>
    api('POST', `/v1/runs/${id}/cancel`).then(
      () => {
        setAction({ ok: 'Cancel requested. A step already running finishes first; nothing after it runs.' })
        run.reload()
      },
      (error) => setAction({ error }),
    )
  return (
    <div id="run-detail">
      <p class="crumbs">
        <a href="#/runs">Runs</a> /
      </p>
      <h1 tabIndex={-1} class="break">
        {r.function_id} <Badge status={r.status} />
      </h1>
      {r.status === 'waiting' && r.waiting_for && (
        <p id="run-state" class="run-state">
          <PauseText pause={r.waiting_for} state="ongoing" />
        </p>
      )}
      {r.status === 'cancelled' && (
        <p id="run-state" class="run-state">
          <CancelCause by={r.cancelled_by} /> at {time(r.ended_at)}.
        </p>
      )}
      {r.status === 'skipped' && (
        <p id="run-state" class="run-state">
          <SkipText error={r.error} />
        </p>
      )}
      <dl class="meta">
        <dt>Run ID</dt>
        <dd class="mono">{r.run_id}</dd>
        <dt>Event</dt>
        <dd>
          <a href={`#/events/${r.event_id}`}>{r.event_name}</a> <span class="muted mono">{r.event_id}</span>
        </dd>
        {r.event_ids.length > 1 && (
          <>
            <dt>Batch</dt>
            <dd>
              {r.event_ids.length} events, in the order the function got them:
              <BatchEvents ids={r.event_ids} />
            </dd>
          </>
        )}
        <dt>Environment</dt>
        <dd>{r.env}</dd>
        <dt>Attempts</dt>
        <dd>{r.attempts}</dd>
        <dt>Queued</dt>
        <dd>{time(r.queued_at)}</dd>
        <dt>Duration</dt>
        <dd>
          {duration(runDuration(r))}
          {unfinished ? ' so far' : ''}
        </dd>
        {r.next_attempt_at && (
          <>
            <dt>Next attempt</dt>
            <dd>{time(r.next_attempt_at)}</dd>
          </>
        )}
      </dl>
      <div class="actions">
        {r.status === 'failed' && (
          <button type="button" id="retry-run" onClick={retry}>
            Retry run
          </button>
        )}
        {unfinished && <CancelRun onConfirm={cancel} />}
        {action.ok && (
          <p class="ok" role="status">
            {action.ok}
          </p>
        )}
        <ErrorMessage error={action.error} />
      </div>
      <h2>Steps</h2>
      {steps.length === 0 ? (
        <p class="muted">{r.status === 'skipped' ? 'None: no step ran.' : 'No step has finished yet.'}</p>
      ) : (
        <ol id="timeline" class="timeline">
          {steps.map((s: any) => (
            <li key={s.id} class={`step ${s.status}`} data-step={s.id}>
              <div class="step-head">
                <strong class="break">{s.name}</strong>
                <Badge status={s.status} />
                <span class="muted">
                  started {time(s.start)} · {duration(s.duration)}
                  {s.status === 'waiting' && r.status === 'waiting' ? ' so far' : ''} · {s.attempts} attempt
                  {s.attempts === 1 ? '' : 's'}
                </span>
              </div>
              <div class="bar-track" aria-hidden="true">
                <div
                  class={s.pause ? 'bar pause' : 'bar'}
                  style={{ marginLeft: `${s.offset * 100}%`, width: `${s.width * 100}%` }}
                />
              </div>
              {s.pause && (
                <p class="pause-text">
                  <PauseText pause={s.pause} state={pauseState(s, r.status)} />
                </p>
              )}
              {s.error ? (
                <RunError error={s.error} />
              ) : (
                s.status === 'completed' && <JsonView value={s.output} label={`Output of step ${s.name}`} />
              )}
            </li>
          ))}
        </ol>
      )}
      <h2>Result</h2>
      {r.status === 'completed' ? (
        <JsonView value={r.output} label="Function output" />
      ) : r.status === 'failed' ? (
        <div id="run-final-error">
          <RunError error={r.error} />
        </div>
      ) : r.status === 'cancelled' ? (
        <p class="muted">None: the run was cancelled before it finished.</p>
      ) : r.status === 'skipped' ? (
        <p class="muted">None: flow control started no run for this event.</p>
      ) : (
        <p class="muted">
          {r.error ? (
            <>
              Waiting to retry after: <RunError error={r.error} />
            </>
          ) : (
            'Not finished yet.'
          )}
        </p>
      )}
    </div>
  )
}
