// The one retry module, driven by policy data (kafkajs' retry/ is the model).
export interface RetryPolicy {
  retries: number
  initialDelayMs: number
  maxDelayMs: number
  factor: number
  /** 0..1: each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number
}

const policy = (retries: number, initialDelayMs: number, maxDelayMs: number, factor = 2, jitter = 0.2): RetryPolicy =>
  Object.freeze({ retries, initialDelayMs, maxDelayMs, factor, jitter })

/** Every retry policy, by name: what each retries and why its numbers, in one place. */
export const retryPolicies = Object.freeze({
  /** `withRetry`'s default, and the client's `send` (which a caller may override). */
  default: policy(5, 100, 10_000),
  /** A stage's batch handler failing (a store down): retried until it succeeds or the stage stops; the records wait. */
  stageHandler: policy(Infinity, 100, 5_000),
  /** Rejoining a consumer group after a rebalance failed (bus/kafka-subscriber.ts). */
  kafkaAssign: policy(Infinity, 200, 10_000),
  /** Reading a topic's offsets and records (bus/kafka.ts readPartition): a restarting broker answers within ~1 s. */
  kafkaOffsets: policy(8, 50, 1_000),
  /** Waiting for partition leaders after topics are created (bus/kafka.ts): elections take up to ~20 s. */
  kafkaLeaders: policy(40, 50, 500, 1.5, 0.1),
  /** An alert notification to its endpoint (api/alert-notify.ts): a receiver down for a few seconds still gets it. */
  alertNotify: policy(4, 500, 10_000),
  /** Between attempts of a function's run; the number of retries is each function's own (runner/). */
  functionBackoff: policy(0, 1_000, 5 * 60_000),
  /** Syncing an app at start (`sluice dev -u URL`) until it answers: an app started later is picked up. */
  appSync: policy(Infinity, 500, 5_000),
} satisfies Record<string, RetryPolicy>)

export const defaultRetryPolicy: RetryPolicy = retryPolicies.default

export function backoffDelayMs(policy: RetryPolicy, attempt: number, random = Math.random): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** attempt)
  return Math.round(base * (1 - policy.jitter + 2 * policy.jitter * random()))
}

export interface RetryOptions {
  policy?: RetryPolicy
  /** Whether an error is worth another attempt; non-retriable errors are thrown at once. */
  shouldRetry?: (err: unknown) => boolean
  signal?: AbortSignal
  /** The least an error asks to wait (a server's Retry-After), if more than the backoff. */
  retryAfterMs?: (err: unknown) => number | undefined
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void
}

export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const policy = options.policy ?? defaultRetryPolicy
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (attempt >= policy.retries || options.signal?.aborted || !(options.shouldRetry?.(err) ?? true)) throw err
      const delayMs = Math.max(backoffDelayMs(policy, attempt), options.retryAfterMs?.(err) ?? 0)
      options.onRetry?.(err, attempt, delayMs)
      await sleep(delayMs, options.signal)
      if (options.signal?.aborted) throw err // aborted while waiting: no further attempt
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
  })
}

/**
 * For a failure a timer retries every few milliseconds (a full disk): calls `report` at most once
 * per `everyMs`, with how many failures it skipped since, so a long outage does not flood the log.
 */
export function onceEvery(everyMs: number) {
  let last = Number.NEGATIVE_INFINITY
  let skipped = 0
  return (report: (skipped: number) => void): void => {
    if (Date.now() - last < everyMs) {
      skipped++
      return
    }
    last = Date.now()
    report(skipped)
    skipped = 0
  }
}
