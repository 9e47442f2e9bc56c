// The webhook page's signature check (preset, secret, key rotation, timestamp tolerance) and its
// delivery ID setting, with what each form gives the PATCH (docs/webhooks.md, "Verification").
import { useState } from 'preact/hooks'
import { NO_DELIVERY_ID, PRESETS, SIGNS_URL, TIMESTAMPED, TOLERANCE_SECONDS } from './webhook-presets.ts'

const { min, max } = TOLERANCE_SECONDS

export function Verification({ current }: { current: any }) {
  const [preset, setPreset] = useState<string>(current?.preset ?? '')
  // A rotation under way shows its previous-secret field: changing the check keeps it only if retyped.
  const [rotating, setRotating] = useState<boolean>(current?.rotating ?? false)
  const samePreset = preset !== '' && current?.preset === preset
  const ending = Boolean(current?.rotating) && samePreset && !rotating
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
      {samePreset && current.rotating && (
        <p id="rotation-state" class="rotating" role="status">
          Rotating: the previous secret is still accepted.
        </p>
      )}
      {preset && (
        <label>
          {rotating ? 'New secret' : 'Secret'}
          <input type="password" name="secret" autocomplete="off" placeholder={secretHint(current, rotating, ending)} />
        </label>
      )}
      {samePreset && rotating && (
        <label>
          Previous secret{' '}
          <span class="muted">(the one the sender signs with now: accepted until you end the rotation)</span>
          <input type="password" name="previous_secret" autocomplete="off" />
        </label>
      )}
      {ending && <input type="hidden" name="end_rotation" value="yes" />}
      {samePreset && (
        <button type="button" id="rotate-secret" class="secondary" onClick={() => setRotating(!rotating)}>
          {rotationButton(current.rotating, rotating)}
        </button>
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
      {TIMESTAMPED.has(preset) && (
        // No min/max: the API's refusal names the field and its bounds, shown as every other error.
        <label>
          Timestamp tolerance{' '}
          <span class="muted">
            (seconds from receipt, {min} to {max}; default {TOLERANCE_SECONDS.default})
          </span>
          <input
            type="number"
            name="tolerance_seconds"
            defaultValue={samePreset ? String(current.tolerance_seconds ?? '') : ''}
            placeholder={String(TOLERANCE_SECONDS.default)}
          />
        </label>
      )}
    </fieldset>
  )
}

function secretHint(current: any, rotating: boolean, ending: boolean): string {
  if (ending) return 'the secret the sender signs with now: the previous one stops being accepted'
  if (rotating && current?.rotating) return 'unchanged unless you type both secrets again'
  if (rotating) return 'the secret that replaces the current one'
  return current ? 'unchanged unless you type a new one' : 'the signing secret the sender gave you'
}

function rotationButton(underWay: boolean, shown: boolean): string {
  if (underWay) return shown ? 'End rotation' : 'Keep rotating'
  return shown ? 'Cancel rotation' : 'Rotate secret'
}

/** The verification change, or undefined to leave it as it is (the secrets are write-only). */
export function verificationOf(form: FormData, current: any): unknown {
  const text = (name: string) => String(form.get(name) ?? '').trim()
  const preset = text('preset')
  const secret = String(form.get('secret') ?? '')
  const previous = form.has('previous_secret') ? String(form.get('previous_secret')) : undefined
  const header = text('header')
  const publicUrl = text('public_url')
  const tolerance = text('tolerance_seconds')
  if (!preset) return current ? null : undefined
  const unchanged =
    current?.preset === preset &&
    (current.header ?? '') === header &&
    (current.public_url ?? '') === publicUrl &&
    (tolerance === '' || Number(tolerance) === current.tolerance_seconds) &&
    previous === (current.rotating ? '' : undefined) &&
    !form.has('end_rotation')
  if (!secret && unchanged) return undefined
  if (!secret) throw new Error('verification.secret: type the secret to set or change the signature check')
  if (previous === '')
    throw new Error('verification.previous_secret: type the secret the sender signs with now, or end the rotation')
  return {
    preset,
    secret,
    ...(previous && { previous_secret: previous }),
    ...(header && { header }),
    ...(publicUrl && { public_url: publicUrl }),
    ...(tolerance && { tolerance_seconds: Number(tolerance) }),
  }
}

export function DeliveryId({ current }: { current: string }) {
  const [mode, setMode] = useState('keep')
  return (
    <fieldset class="delivery-id">
      <legend>Delivery ID</legend>
      <p class="muted">
        The dedup key of events the transform gives no id: now <code id="delivery-id-current">{current}</code>
      </p>
      <label>
        Read it from
        <select name="delivery_id_mode" value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
          <option value="keep">Unchanged</option>
          <option value="default">The preset's default</option>
          <option value="header">A header</option>
          <option value={NO_DELIVERY_ID}>Nowhere: key events by the request</option>
        </select>
      </label>
      {mode === 'header' && (
        <label>
          Header
          <input type="text" name="delivery_id" placeholder="X-Request-Id" />
        </label>
      )}
    </fieldset>
  )
}

/** `delivery_id` for the PATCH: a header name, "none", null for the preset's default, or undefined. */
export function deliveryIdOf(form: FormData): string | null | undefined {
  const mode = String(form.get('delivery_id_mode') ?? 'keep')
  if (mode === 'keep') return undefined
  if (mode === 'default') return null
  if (mode === NO_DELIVERY_ID) return NO_DELIVERY_ID
  return String(form.get('delivery_id') ?? '').trim()
}
