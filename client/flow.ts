// Flow control of a function's runs, as its author writes it (Inngest's option shapes): how many execute
// at once, how fast they start, which events start none, and how events are gathered into runs. Checked
// when the function is defined, by the server's own parser (core/flow.ts), which gives the `FlowControl`
// the router and the runner apply (durations in milliseconds).
import type { Duration } from '../core/duration.ts'
import { parseFlow, type FlowControl } from '../core/flow.ts'

export type { FlowControl } from '../core/flow.ts'

export interface ConcurrencyOption {
  /** Runs executing a step at once (sleeping and waiting runs do not count). */
  limit: number
  /** A CEL expression over `event`: the limit holds per value. */
  key?: string
  /** `fn` (default): per function; `env`: shared by every function of the environment with the same key. */
  scope?: 'fn' | 'env'
}

export interface FlowOptions {
  concurrency?: number | ConcurrencyOption | ConcurrencyOption[]
  /** Runs start at most `limit` per `period` (per key); the others wait, in arrival order. */
  throttle?: { limit: number; period: Duration; burst?: number; key?: string }
  /** Events past `limit` per `period` (per key) start no run; they are counted and shown. */
  rateLimit?: { limit: number; period: Duration; key?: string }
  /** One run per quiet `period` (per key), with the last event; `timeout` caps how long a burst postpones it. */
  debounce?: { period: Duration; key?: string; timeout?: Duration }
  /** The handler gets `events`: up to `maxSize` gathered within `timeout` of the first (per key; `if` filters). */
  batchEvents?: { maxSize: number; timeout: Duration; key?: string; if?: string }
  /** `run`: a CEL expression over `event` giving seconds of head start (−600 to 600). */
  priority?: { run: string }
  /** A CEL expression over `event`: one run per value per 24 hours. */
  idempotency?: string
  /** One run at a time (per key): a new one is skipped, or cancels the one running. */
  singleton?: { key?: string; mode: 'skip' | 'cancel' }
}

/** The flow control of `options`, or undefined when it has none. Throws a TypeError naming the option. */
export function checkFlow(options: FlowOptions): FlowControl | undefined {
  return parseFlow(options, (what, message) => {
    throw new TypeError(`createFunction({ ${what} }): ${message}`)
  })
}
