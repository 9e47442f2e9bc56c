// The one retry module, driven by policy data (kafkajs' retry/ is the model).
export interface RetryPolicy {
  retries: number
  initialDelayMs: number
  maxDelayMs: number
  factor: number
  /** 0..1: each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number
}

export const defaultRetryPolicy: RetryPolicy = Object.freeze({ retries: 5, initialDelayMs: 100, maxDelayMs: 10_000, factor: 2, jitter: 0.2 })

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
