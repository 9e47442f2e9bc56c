// Pausing and resuming a webhook from its page. Both are one click: a pause answers and keeps every
// request (it loses none), and a resume delivers what was held, in order. The held count is shown.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Badge, ErrorMessage } from '../ui/common.tsx'
import { fromNow, time } from '../ui/format.ts'

export function WebhookPauseControl({ webhook, onChange }: { webhook: any; onChange(): void }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error>()
  const call = (action: 'pause' | 'resume') => {
    setBusy(true)
    setError(undefined)
    api('POST', `/v1/webhooks/${encodeURIComponent(webhook.id)}/${action}`)
      .then(onChange, setError)
      .finally(() => setBusy(false))
  }
  const held = `${webhook.held} request${webhook.held === 1 ? '' : 's'} held`
  return (
    <div class="pause-control webhook-pause" data-paused={String(webhook.paused)}>
      {webhook.paused ? (
        <div>
          <Badge status="paused" />{' '}
          <span class="muted small-text" title={time(webhook.paused_at)}>
            {fromNow(webhook.paused_at)}; requests are answered and kept, not delivered
          </span>{' '}
          <span id="webhook-held">{held}</span>
        </div>
      ) : (
        <div class="muted">active{webhook.held > 0 && <span id="webhook-held"> · {held}, being released</span>}</div>
      )}
      {webhook.paused ? (
        <button type="button" class="small resume" disabled={busy} onClick={() => call('resume')}>
          Resume and deliver held requests
        </button>
      ) : (
        <button type="button" class="small pause" disabled={busy} onClick={() => call('pause')}>
          Pause
        </button>
      )}
      <ErrorMessage error={error} />
    </div>
  )
}
