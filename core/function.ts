// A registered function as the server serves it: what the registry, the router and the runner know of
// it, whatever runs its code (a handler in this process, client/function.ts, or an app over HTTP, sdk/).
// Checked before it gets here: by createFunction for a function written in JavaScript, by an app's sync.
import type { FlowControl } from './flow.ts'

export const DEFAULT_FUNCTION_RETRIES = 3
export const DEFAULT_FUNCTION_TIMEOUT_MS = 5 * 60_000

/**
 * What starts a run: an event by name (`"shop/*"` matches every name under `shop/`), optionally
 * filtered by a CEL expression over `event`; or a cron schedule.
 */
export type TriggerSpec = { event: string; if?: string } | { cron: string }

/** A cancellation as the runner applies it: durations in milliseconds. */
export interface CancelRule {
  event: string
  match?: string
  if?: string
  timeoutMs?: number
}

export interface FunctionSpec {
  /** The environment the function is served in: the client's branch env, or production. */
  env: string
  /** `<app id>-<function id>`: what the registry, topics and runs are named by. */
  key: string
  appId: string
  id: string
  name: string
  triggers: TriggerSpec[]
  cancelOn: CancelRule[]
  /** Concurrency, throttle, rate limit, debounce, batching, priority, idempotency, singleton (core/flow.ts). */
  flow?: FlowControl
  /** Retries after the first attempt. */
  retries: number
  /** How long one execution may take before the attempt fails with FUNCTION_TIMEOUT. */
  timeoutMs: number
}
