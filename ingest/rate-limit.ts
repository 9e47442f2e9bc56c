// Event API rate limits: a token bucket per environment on this ingest node. A request of n
// events takes n tokens; a bucket holds one second's worth and refills continuously. Written
// here because @fastify/rate-limit counts requests in fixed windows, and this limit counts
// events, weighted by batch size, with a rate each environment may set.
export interface RateLimiter {
  /** Takes `count` tokens at `perSecond`, or, taking nothing, says in how many ms there will be enough. */
  take(key: string, perSecond: number, count: number): number
}

export function createRateLimiter(now: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number; perSecond: number }>()
  return {
    take(key, perSecond, count) {
      const t = now()
      let bucket = buckets.get(key)
      if (!bucket || bucket.perSecond !== perSecond) {
        bucket = { tokens: perSecond, at: t, perSecond }
        buckets.set(key, bucket)
      }
      bucket.tokens = Math.min(perSecond, bucket.tokens + ((t - bucket.at) * perSecond) / 1000)
      bucket.at = t
      // A batch of more than a second's worth passes once the bucket is full, leaving it in debt.
      const needed = Math.min(count, perSecond)
      if (bucket.tokens < needed) return Math.ceil(((needed - bucket.tokens) * 1000) / perSecond)
      bucket.tokens -= count
      return 0
    },
  }
}
