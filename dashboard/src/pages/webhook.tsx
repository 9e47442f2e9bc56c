// One webhook: URL, pause and resume, transform in a code editor with a live preview, lists,
// signature check, recent deliveries with replay and, for the branch group, the central page.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { CopyButton, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { CodeEditor, type Problem } from '../ui/lazy-editor.tsx'
import { lines } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { Preview } from './webhook-preview.tsx'
import { WebhookPauseControl } from './webhook-pause.tsx'
import { Deliveries, Unrouted } from './webhook-requests.tsx'

const PRESETS = [
  'stripe',
  'github',
  'slack',
  'shopify',
  'hmac-sha256',
  'standard-webhooks',
  'twilio',
  'linear',
  'paddle',
  'square',
  'intercom',
  'zendesk',
]
/** The presets that sign the URL they called (control/presets.ts): they need it. */
const SIGNS_URL = new Set(['twilio', 'square'])
const EXAMPLE =
  'function transform(evt, headers, queryParams, raw) {\n  return { name: "stripe/" + evt.type, data: evt, id: evt.id }\n}\n'

function Verification({ current }: { current: any }) {
  const [preset, setPreset] = useState<string>(current?.preset ?? '')
  return (
    <fieldset class="verification">
      <legend>Signature check</legend>
      <label>
        Preset
        <select name="preset" value={preset} onChange={(e) => setPreset(e.currentTarget.value)}>
          <option value="">None: accept unsigned requests</option>
          {PRESETS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      {preset && (
        <label>
          Secret
          <input
            type="password"
            name="secret"
            autocomplete="off"
            placeholder={current ? 'unchanged unless you type a new one' : 'the signing secret the sender gave you'}
          />
        </label>
      )}
      {preset === 'hmac-sha256' && (
        <label>
          Header
          <input type="text" name="header" value={current?.header ?? ''} placeholder="x-signature" />
        </label>
      )}
      {SIGNS_URL.has(preset) && (
        <label>
          Public URL
          <input
            type="url"
            name="public_url"
            value={current?.public_url ?? ''}
            placeholder="the URL configured at the provider, without the query string"
          />
        </label>
      )}
    </fieldset>
  )
}

/** The verification change, or undefined to leave it as it is (the secret is write-only). */
function verificationOf(form: FormData, current: any): unknown {
  const preset = String(form.get('preset') ?? '')
  const secret = String(form.get('secret') ?? '')
  const header = String(form.get('header') ?? '').trim()
  const publicUrl = String(form.get('public_url') ?? '').trim()
  if (!preset) return current ? null : undefined
  const unchanged = (current?.header ?? '') === header && (current?.public_url ?? '') === publicUrl
  if (!secret && current?.preset === preset && unchanged) return undefined
  if (!secret) throw new Error('verification.secret: type the secret to set or change the signature check')
  // The tolerance set by the API or CLI is kept; a new secret ends a rotation (the previous one is write-only).
  const tolerance = current?.preset === preset && current.tolerance_seconds
  return {
    preset,
    secret,
    ...(header && { header }),
    ...(publicUrl && { public_url: publicUrl }),
    ...(tolerance && { tolerance_seconds: tolerance }),
  }
}

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
      await api('PATCH', `/v1/webhooks/${id}`, {
        name: String(form.get('name')),
        transform: code.trim() === '' ? null : code,
        allow_ips: lines(String(form.get('allow_ips'))),
        deny_ips: lines(String(form.get('deny_ips'))),
        allow_events: lines(String(form.get('allow_events'))),
        deny_events: lines(String(form.get('deny_events'))),
        ...(verification !== undefined && { verification }),
      })
      setSaved({ ok: true })
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
        <form id="edit-webhook" class="panel" onSubmit={save} aria-label="Webhook settings">
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
          <Verification current={w.verification} />
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
