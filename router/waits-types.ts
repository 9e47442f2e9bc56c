// Open waits, as the runner and the router share them: a run waiting for an event (step.waitForEvent)
// or a run that a matching event cancels (cancelOn). Both go to the wait matcher (router/matcher.ts)
// on one topic, keyed by what an event must match, so a registration and the events after it meet on
// one partition, in order. See router/ARCHITECTURE.md.
import type { EventRecord } from '../core/event.ts'
import { valueAt } from '../core/expression.ts'

export interface WaitRegistration {
  /** `<runId>\0<seq>` for a wait, `<runId>\0cancel\0<rule index>` for a cancellation. */
  waitId: string
  kind: 'resume' | 'cancel'
  env: string
  /** The awaited event's name. */
  event: string
  /** The field path compared (`data.orderId`), or '' when none. */
  match: string
  /** The triggering event's value at `match`, as JSON ('' when no match). */
  value: string
  /** A CEL expression over `event` (the triggering event) and `async` (the candidate). */
  if?: string
  /** The triggering event as `if` sees it (only when there is an `if`). */
  trigger?: Pick<EventRecord, 'internalId' | 'id' | 'name' | 'data' | 'ts' | 'env'>
  /** Only events received at or after this time match. */
  sinceMs: number
  /** After this the wait is forgotten (its run timed out, or the cancellation's timeout passed). */
  expiresAt: number
  /** The run to signal: a resume names its waiting record's seq. */
  target: { env: string; functionKey: string; runId: string; seq?: number; routeKey?: string }
}

/** Where a registration lives: the matcher's partition and index key. */
export type WaitKey = Pick<WaitRegistration, 'env' | 'event' | 'match' | 'value'>

export const matchKey = (k: WaitKey): string => `${k.env}\0${k.event}\0${k.match}\0${k.value}`

/** Registering and forgetting waits (router/waits-output.ts). */
export interface WaitsOutput {
  /**
   * Durable once resolved: the matcher sees every event routed after this. `together`: the keys and
   * the registrations are published in this tick, for a log that writes one tick's publishes at once
   * (the local log: one-pass/index.ts); otherwise the keys are durable first.
   */
  register(waits: WaitRegistration[], options?: { together?: boolean }): Promise<void>
  remove(waits: Array<WaitKey & { waitId: string }>): Promise<void>
}

/** How long a cancellation without a timeout is kept: the longest a run may wait, and a day. */
export const MAX_CANCEL_MS = 366 * 86_400_000

export const cancelWaitId = (runId: string, rule: number) => `${runId}\0cancel\0${rule}`

/** Where a wait or cancellation is indexed: the awaited name, and the triggering event's value at `match`. */
export function waitKey(env: string, event: string, match: string | undefined, trigger: EventRecord): WaitKey {
  if (match === undefined) return { env, event, match: '', value: '' }
  const value = valueAt(trigger, match.split('.'))
  // A triggering event without the field waits for what no event can carry.
  return { env, event, match, value: value === undefined ? '\u0000absent' : JSON.stringify(value) }
}
