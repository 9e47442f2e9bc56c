// Pausing and resuming a function from the Functions page. A pause is one click (it holds runs, it loses
// none); a resume asks first, inline as run-cancel.tsx does, what to do with the runs held meanwhile:
// run them in order, or skip them (which cannot be undone).
import { useState } from 'preact/hooks'
import { useQuestion } from '../ui/use-question.ts'
import { api, query } from '../api.ts'
import { Badge, ErrorMessage } from '../ui/common.tsx'
import { fromNow, time } from '../ui/format.ts'

export function PauseControl({ fn, onChange }: { fn: any; onChange(): void }) {
  const { asking, setAsking, answer, open } = useQuestion()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error>()
  const call = (action: 'pause' | 'resume', body?: unknown) => {
    setBusy(true)
    setAsking(false)
    setError(undefined)
    api('POST', `/v1/functions/${encodeURIComponent(fn.id)}/${action}${query({ env: fn.env })}`, body)
      .then(onChange, setError)
      .finally(() => setBusy(false))
  }
  const name = fn.id
  return (
    <div class="pause-control" data-paused={String(fn.paused)}>
      {fn.paused ? (
        <div>
          <Badge status="paused" />{' '}
          <span class="muted small-text" title={time(fn.paused_at)}>
            {fromNow(fn.paused_at)}; new runs are held
          </span>
        </div>
      ) : (
        <div class="muted">active</div>
      )}
      {!fn.paused ? (
        <button type="button" class="small pause" disabled={busy} onClick={() => call('pause')}>
          Pause<span class="sr-only"> {name}</span>
        </button>
      ) : !asking ? (
        <button type="button" class="small resume" ref={open} disabled={busy} onClick={() => setAsking(true)}>
          Resume…<span class="sr-only"> {name}</span>
        </button>
      ) : (
        <fieldset class="confirm confirm-resume">
          <legend>Resume {name}?</legend>
          <p>The runs that arrived while it was paused are held, in order of arrival.</p>
          <button type="button" class="run-held" ref={answer} onClick={() => call('resume', { skip_held: false })}>
            Resume and run them
          </button>
          <button type="button" class="danger skip-held" onClick={() => call('resume', { skip_held: true })}>
            Resume and skip them
          </button>
          <button type="button" class="secondary" onClick={() => setAsking(false)}>
            Keep it paused
          </button>
        </fieldset>
      )}
      <ErrorMessage error={error} />
    </div>
  )
}
