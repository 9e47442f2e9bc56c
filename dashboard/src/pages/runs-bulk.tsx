// Bulk cancel and replay of the runs the page's filters match (POST /v1/runs/bulk). A dry run answers how
// many runs it would touch before anything is asked; once confirmed, the server works through them in
// the background and the panel shows the job's progress, asked for every second, with the recent jobs.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ErrorMessage } from '../ui/common.tsx'
import { useApi } from '../ui/use-api.ts'
import { BulkJobs, jobVerb } from './runs-bulk-jobs.tsx'
import { describeFilter, UNFINISHED } from './runs-filters.tsx'

const REFRESH_MS = 1_000
/** After a job is done its cancels and replays still land for a moment: the runs list is asked a while longer. */
const SETTLE_MS = 5_000

type Action = 'cancel' | 'replay'
type Mode = 'new' | 'retry'

/** The filter a job gets: a retry acts on failed runs only, so with no status it asks for those. */
function jobFilter(filter: Record<string, string>, action: Action, mode: Mode): Record<string, string> {
  return action === 'replay' && mode === 'retry' && !filter.status ? { ...filter, status: 'failed' } : filter
}

/** Why the action cannot apply to these filters, if it cannot. */
function unfit(filter: Record<string, string>, action: Action, mode: Mode): string | undefined {
  if (action === 'cancel' && filter.status && !UNFINISHED.includes(filter.status))
    return `Runs that ended cannot be cancelled; these filters choose ${filter.status} runs.`
  if (action === 'replay' && mode === 'retry' && filter.status !== 'failed')
    return `Only failed runs are retried; these filters choose ${filter.status} runs.`
}

function countSentence(count: { matched: number; complete: boolean }, action: Action, mode: Mode, status?: string) {
  if (count.matched === 0) return 'No run matches these filters.'
  const one = count.matched === 1 && count.complete
  const n = `${count.complete ? '' : 'at least '}${count.matched} ${one ? 'run' : 'runs'}`
  if (action === 'cancel' && !status)
    return one
      ? `${n} matches: this will cancel it unless it has ended.`
      : `${n} match: this will cancel those that have not ended; ended runs are skipped.`
  if (action === 'cancel') return `This will cancel ${n}.`
  if (mode === 'retry') return `This will retry ${n} from ${one ? 'its' : 'their'} last completed step.`
  return `This will replay ${n}: a new run of ${one ? 'its event' : "each one's event"}.`
}

function BulkQuestion(props: {
  filter: Record<string, string>
  action: Action
  onStart(job: any): void
  onClose(): void
}) {
  const { action } = props
  const [mode, setMode] = useState<Mode>('new')
  const filter = jobFilter(props.filter, action, mode)
  const problem = unfit(filter, action, mode)
  const body = { action, ...(action === 'replay' && { mode }), filter }
  const asked = JSON.stringify(body)
  // Each count says which question it answers: in the render where the mode changes, before the new
  // count is asked for, the last one must not be shown in the new mode's words.
  const count = useApi(
    () =>
      problem
        ? Promise.resolve(undefined)
        : api('POST', '/v1/runs/bulk/dry-run', body).then((answer) => ({ asked, answer })),
    [asked, problem],
  )
  const [error, setError] = useState<Error>()
  const question = useRef<HTMLFieldSetElement>(null)
  // The question opens where the button was: focus moves into it for keyboard and screen-reader users
  // (onto the question, not an answer: "Yes" waits for the count).
  useEffect(() => question.current?.focus(), [])
  const start = () => api('POST', '/v1/runs/bulk', body).then((r) => props.onStart(r.data), setError)
  const counted = count.data?.asked === asked ? count.data.answer.data : undefined
  return (
    <fieldset id="confirm-bulk" class="confirm" tabIndex={-1} ref={question}>
      <legend>{action === 'cancel' ? 'Cancel the matching runs?' : 'Replay the matching runs?'}</legend>
      {action === 'replay' && (
        <div class="radios" role="radiogroup" aria-label="Replay as">
          <label class="check">
            <input type="radio" name="mode" checked={mode === 'new'} onChange={() => setMode('new')} />
            New runs of the same events
          </label>
          <label class="check">
            <input type="radio" name="mode" checked={mode === 'retry'} onChange={() => setMode('retry')} />
            Retry failed runs from their last completed step
          </label>
        </div>
      )}
      <p id="bulk-count" aria-live="polite">
        {problem ?? (count.loading || !counted ? 'Counting…' : countSentence(counted, action, mode, filter.status))}
      </p>
      <ErrorMessage error={count.error ?? error} />
      <button
        type="button"
        id="confirm-bulk-start"
        class={action === 'cancel' ? 'danger' : undefined}
        disabled={Boolean(problem) || count.loading || !counted || counted.matched === 0}
        onClick={start}
      >
        Yes, {action} them
      </button>
      <button type="button" class="secondary" onClick={props.onClose}>
        No, leave them
      </button>
    </fieldset>
  )
}

/** The started job's progress in a line: runs matched so far, acted on, skipped (ended, not failed, …). */
function Progress({ job }: { job: any }) {
  const verb = jobVerb(job)
  if (job.status === 'failed')
    return (
      <>
        Stopped: {job.done} {verb}, {job.skipped} skipped, of {job.matched} matched.
      </>
    )
  if (job.status === 'done')
    return (
      <>
        Done: {job.done} {verb}, {job.skipped} skipped, of {job.matched} matched.
      </>
    )
  return (
    <>
      Working: {job.matched} matched, {job.done} {verb}, {job.skipped} skipped so far…
    </>
  )
}

export function BulkPanel({ filter, onProgress }: { filter: Record<string, string>; onProgress(): void }) {
  const [asking, setAsking] = useState<Action>()
  const [started, setStarted] = useState<string>()
  const [doneAt, setDoneAt] = useState<number>()
  const jobs = useApi(() => api('GET', '/v1/runs/bulk'), [])
  const list: any[] = jobs.data?.data ?? []
  const job = list.find((j) => j.id === started)
  const ended = job && job.status !== 'running'
  useEffect(() => {
    if (ended && doneAt === undefined) setDoneAt(Date.now())
  }, [ended])
  const settling = started !== undefined && (!ended || doneAt === undefined || Date.now() - doneAt < SETTLE_MS)
  const polling = settling || list.some((j) => j.status === 'running')
  useEffect(() => {
    if (!polling) return
    const timer = setInterval(() => {
      jobs.reload()
      if (settling) onProgress()
    }, REFRESH_MS)
    return () => clearInterval(timer)
  }, [polling, settling])
  const buttons = { cancel: useRef<HTMLButtonElement>(null), replay: useRef<HTMLButtonElement>(null) }
  const last = useRef<Action | undefined>(undefined)
  // When the question closes, focus goes back to the button that opened it.
  useEffect(() => {
    if (asking) last.current = asking
    else if (last.current) buttons[last.current].current?.focus()
  }, [asking])
  return (
    <section id="bulk" class="panel" aria-labelledby="bulk-title">
      <h2 id="bulk-title">Bulk actions</h2>
      <p class="muted">On the runs the filters above match: {describeFilter(filter)}.</p>
      {asking ? (
        <BulkQuestion
          key={asking}
          filter={filter}
          action={asking}
          onClose={() => setAsking(undefined)}
          onStart={(j) => {
            setAsking(undefined)
            setDoneAt(undefined)
            setStarted(j.id)
            jobs.reload()
          }}
        />
      ) : (
        <div class="actions">
          <button
            type="button"
            id="bulk-cancel"
            class="secondary"
            ref={buttons.cancel}
            onClick={() => setAsking('cancel')}
          >
            Cancel matching runs…
          </button>
          <button
            type="button"
            id="bulk-replay"
            class="secondary"
            ref={buttons.replay}
            onClick={() => setAsking('replay')}
          >
            Replay matching runs…
          </button>
        </div>
      )}
      {started && (
        <p
          id="bulk-progress"
          class={job?.status === 'done' ? 'ok' : job?.status === 'failed' ? 'error' : undefined}
          role="status"
        >
          {job ? <Progress job={job} /> : 'Starting…'}
        </p>
      )}
      <ErrorMessage error={jobs.error} />
      {list.length > 0 && <BulkJobs jobs={list} />}
    </section>
  )
}
