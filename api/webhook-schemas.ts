// The shapes of `/v1/webhooks` (see api/schemas.ts). Rules a schema cannot state stay in the
// domain (control/webhook-input.ts): a transform that compiles, CIDR blocks, the header of a preset.
import { Type } from '@sinclair/typebox'
import { VERIFICATION_PRESETS } from '../control/types.ts'
import { DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS, MIN_TOLERANCE_SECONDS } from '../control/presets.ts'
import { MAX_LIST_ENTRIES, MAX_TRANSFORM_BYTES } from '../control/webhook-input.ts'
import { REQUEST_STATUSES } from '../store/requests-types.ts'
import { Literals, Nullable, PageQuery, Time } from './schemas.ts'

const List = (description: string) =>
  Type.Optional(
    Nullable(Type.Array(Type.String(), { maxItems: MAX_LIST_ENTRIES, description: `${description}; null: none` })),
  )
const TransformSource = Type.String({
  description: `Source of function transform(evt, headers, queryParams, raw), at most ${MAX_TRANSFORM_BYTES} bytes; null: the default`,
})

const WebhookFields = {
  name: Type.String({ minLength: 1, maxLength: 128, examples: ['stripe'] }),
  env: Type.Optional(Type.String({ description: 'A standard environment, or the branch group; default production' })),
  transform: Type.Optional(Nullable(TransformSource)),
  allow_ips: List('CIDR blocks allowed to send (empty: any)'),
  deny_ips: List('CIDR blocks refused (deny wins)'),
  allow_events: List('Event name patterns allowed ("*" matches anything)'),
  deny_events: List('Event name patterns refused'),
  verification: Type.Optional(
    Nullable(
      Type.Object(
        {
          preset: Literals(VERIFICATION_PRESETS),
          secret: Type.String({ minLength: 8, maxLength: 512, description: 'Write-only: never shown back' }),
          previous_secret: Type.Optional(
            Type.String({
              minLength: 8,
              maxLength: 512,
              description: 'Key rotation: the secret being replaced, accepted too until removed. Write-only',
            }),
          ),
          header: Type.Optional(Type.String({ description: 'The signature header (hmac-sha256 only)' })),
          public_url: Type.Optional(
            Type.String({
              maxLength: 2048,
              description: 'twilio, square (required): the URL the provider calls, without the query string',
            }),
          ),
          tolerance_seconds: Type.Optional(
            Type.Integer({
              description:
                `Presets with a signed timestamp: how far it may be from the receive time, ` +
                `${MIN_TOLERANCE_SECONDS} to ${MAX_TOLERANCE_SECONDS}; default ${DEFAULT_TOLERANCE_SECONDS}`,
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  ),
  delivery_id: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 128,
        description:
          'The header with the provider\'s delivery ID (dedup key of events without id), or "none"; ' +
          "null: the preset's default",
      }),
    ),
  ),
  disabled: Type.Optional(Type.Boolean()),
}
export const CreateWebhook = Type.Object(WebhookFields, {
  additionalProperties: false,
  examples: [{ name: 'stripe', verification: { preset: 'stripe', secret: 'whsec_0123456789' } }],
})
export const PatchWebhook = Type.Partial(CreateWebhook, { additionalProperties: false, examples: [{ disabled: true }] })

export const Webhook = Type.Object({
  id: Type.String({ description: 'wh_…: keep it secret, it is the URL' }),
  name: Type.String(),
  url: Type.String({ description: 'Where the producer posts' }),
  env: Type.String(),
  transform: Nullable(Type.String()),
  transform_version: Type.Integer(),
  allow_ips: Type.Array(Type.String()),
  deny_ips: Type.Array(Type.String()),
  allow_events: Type.Array(Type.String()),
  deny_events: Type.Array(Type.String()),
  verification: Nullable(
    Type.Object({
      preset: Literals(VERIFICATION_PRESETS),
      header: Nullable(Type.String()),
      public_url: Nullable(Type.String()),
      tolerance_seconds: Nullable(Type.Integer({ description: 'null: no signed timestamp' })),
      rotating: Type.Boolean({ description: 'A previous_secret is set and still accepted' }),
    }),
  ),
  delivery_id: Type.String({
    description:
      'Where the delivery ID (the dedup key of events without id) is read: header:<name>, body:<field>, or none',
  }),
  disabled: Type.Boolean(),
  paused: Type.Boolean({ description: 'Requests are captured and held, not transformed, until resumed' }),
  paused_at: Nullable(Time('When it was paused (null: running)')),
  held: Type.Integer({ description: 'Requests held while paused, waiting for the resume to release them in order' }),
  created_at: Time('Creation time'),
  updated_at: Time('Last change'),
})

const EventOut = Type.Object({
  name: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  id: Type.Optional(Type.String()),
  ts: Type.Optional(Type.Integer()),
})
const RequestError = Type.Object({ code: Type.String({ description: 'See docs/errors.md' }), message: Type.String() })

export const WebhookRequest = Type.Object({
  request_id: Type.String(),
  webhook_id: Type.String(),
  status: Literals(REQUEST_STATUSES),
  attempt: Type.Integer({ description: '1, plus one per replay' }),
  received_at: Type.Integer({ description: 'Milliseconds' }),
  processed_at: Type.Integer({ description: 'Milliseconds' }),
  env: Nullable(Type.String()),
  error: Nullable(RequestError),
  event_ids: Type.Array(Type.String()),
  events: Type.Array(EventOut),
  request: Type.Object({
    ip: Type.String(),
    headers: Type.Record(Type.String(), Type.String()),
    query: Type.Record(Type.String(), Type.Array(Type.String())),
    body: Type.String(),
    body_encoding: Literals(['utf8', 'base64']),
  }),
})
export const RequestsQuery = Type.Object({ status: Type.Optional(Literals(REQUEST_STATUSES)), ...PageQuery })
export const RequestParams = Type.Object({ id: Type.String(), rid: Type.String({ description: 'Request ID' }) })

export const PreviewBody = Type.Object(
  {
    payload: Type.Optional(Type.Unknown({ description: 'The body as JSON (or give raw)' })),
    raw: Type.Optional(Type.String({ description: 'The body as sent, as a string (or give payload)' })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    query: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
    transform: Type.Optional(Nullable(TransformSource)),
  },
  { additionalProperties: false, examples: [{ payload: { type: 'invoice.paid' }, headers: { 'x-kind': 'test' } }] },
)
export const PreviewResult = Type.Object({
  ok: Type.Boolean(),
  events: Type.Array(EventOut),
  error: Nullable(
    Type.Object({
      ...RequestError.properties,
      line: Type.Optional(Type.Integer({ description: "Where in the transform's source: its line (1-based)" })),
      column: Type.Optional(Type.Integer({ description: 'and column (1-based)' })),
    }),
  ),
})
export const Replayed = Type.Object({ request_id: Type.String(), attempt: Type.Integer() })
export const ReplayAllBody = Type.Object(
  { status: Type.Optional(Literals(['failed', 'unrouted'])) },
  { additionalProperties: false },
)
export const ReplayedAll = Type.Object({ status: Literals(['failed', 'unrouted']), replayed: Type.Integer() })
