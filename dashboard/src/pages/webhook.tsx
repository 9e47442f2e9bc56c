// One webhook: URL, pause and resume, transform in a code editor with a live preview, lists,
// signature check and delivery ID, recent deliveries with replay and, for the branch group, the central page.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { CopyButton, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { CodeEditor, type Problem } from '../ui/lazy-editor.tsx'
import { lines } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { Preview } from './webhook-preview.tsx'
import { WebhookPauseControl } from './webhook-pause.tsx'
import { Deliveries, Unrouted } from './webhook-requests.tsx'
import { DeliveryId, deliveryIdOf, Verification, verificationOf } from './webhook-verification.tsx'

const EXAMPLE =
  'function transform(evt, headers, queryParams, raw) {\n  return { name: "stripe/" + evt.type, data: evt, id: evt.id }\n}\n'

export function WebhookPage({ id }: { id: string }) {
  const webhook = useApi(() => api('GET', `/v1/webhooks/${id}`), [id])
  const [transform, setTransform] = useState<string | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [saved, setSaved] = useState<{ ok?: boolean; error?: Error }>({})
  if (webhook.loading && !webhook.data) return <Loading />
  if (!webhook.data)
    return (
      <>
        <h1 tabIndex={-1}>Webhook</h1>
        <ErrorMessage error={webhook.error} />
      </>
    )
  const w = webhook.data.data
  const code = transform ?? w.transform ?? ''
  const save = async (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    setSaved({})
    try {
      const verification = verificationOf(form, w.verification)
      const deliveryId = deliveryIdOf(form)
      await api('PATCH', `/v1/webhooks/${id}`, {
        name: String(form.get('name')),
        transform: code.trim() === '' ? null : code,
        allow_ips: lines(String(form.get('allow_ips'))),
        deny_ips: lines(String(form.get('deny_ips'))),
        allow_events: lines(String(form.get('allow_events'))),
        deny_events: lines(String(form.get('deny_events'))),
        ...(verification !== undefined && { verification }),
        ...(deliveryId !== undefined && { delivery_id: deliveryId }),
      })
      setSaved({ ok: true })
      webhook.reload()
    } catch (error) {
      setSaved({ error: error as Error })
    }
  }
  return (
    <>
      <p class="crumbs">
        <a href="#/webhooks">Webhooks</a> /
      </p>
      <h1 tabIndex={-1} class="break">
        Webhook {w.name}
      </h1>
      <p class="url-line">
        <span>URL</span>{' '}
        <code id="webhook-url" class="break">
          {w.url}
        </code>{' '}
        <CopyButton text={w.url} label="Copy URL" />
        <span class="muted"> · env {w.env}</span>
      </p>
      <WebhookPauseControl webhook={w} onChange={webhook.reload} />
      <div class="webhook-grid">
        <form
          id="edit-webhook"
          class="panel"
          onSubmit={save}
          aria-label="Webhook settings"
          data-updated-at={w.updated_at}
        >
          <label>
            Name
            <input type="text" name="name" value={w.name} />
          </label>
          <div class="label" id="transform-label">
            Transform <span class="muted">(JavaScript; empty keeps the body as the event)</span>
          </div>
          <CodeEditor
            id="transform"
            label="Transform"
            language="javascript"
            value={code}
            minLines={8}
            problem={problem}
            onChange={(value) => {
              setTransform(value)
              setSaved({})
            }}
          />
          {code.trim() === '' && (
            <p class="muted">
              For example: <code class="break">{EXAMPLE}</code>
            </p>
          )}
          <div class="grid-2">
            <label>
              Allowed IPs (CIDR)<textarea name="allow_ips">{w.allow_ips.join('\n')}</textarea>
            </label>
            <label>
              Denied IPs (CIDR)<textarea name="deny_ips">{w.deny_ips.join('\n')}</textarea>
            </label>
            <label>
              Allowed event names (* wildcards)<textarea name="allow_events">{w.allow_events.join('\n')}</textarea>
            </label>
            <label>
              Denied event names<textarea name="deny_events">{w.deny_events.join('\n')}</textarea>
            </label>
          </div>
          {/* Keyed by the saved version: a save starts them afresh, typed secrets cleared. */}
          <Verification key={`v${w.updated_at}`} current={w.verification} />
          <DeliveryId key={`d${w.updated_at}`} current={w.delivery_id} />
          <button type="submit" id="save-webhook">
            Save
          </button>
          <div id="save-status">
            {saved.ok && <Ok>Saved.</Ok>}
            <ErrorMessage error={saved.error} />
          </div>
        </form>
        <Preview webhookId={id} transform={code} onProblem={setProblem} />
      </div>
      <Deliveries webhookId={id} />
      {w.env === 'branch' && <Unrouted webhookId={id} />}
    </>
  )
}
