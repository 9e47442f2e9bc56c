// Failed sign-ins, counted per account and per client address over a window: past the limit, sign-ins
// wait (429 LOGIN_THROTTLED with Retry-After) until the window of the first failure ends. Counted in
// each api process (behind a load balancer, an attacker meets the limit once per process, a small
// factor over argon2id's cost per guess); bounded in memory, the oldest counts dropped first.
const WINDOW_MS = 15 * 60_000
const PER_ACCOUNT = 5
const PER_ADDRESS = 20
const MAX_ENTRIES = 10_000

interface Count {
  failures: number
  since: number
}

export function createLoginThrottle(now = () => Date.now()) {
  const counts = new Map<string, Count>()
  const account = (email: string) => `a\0${email.trim().toLowerCase()}`
  const address = (ip: string) => `i\0${ip}`

  const current = (key: string): Count | undefined => {
    const c = counts.get(key)
    if (c && now() - c.since >= WINDOW_MS) {
      counts.delete(key)
      return undefined
    }
    return c
  }
  const bump = (key: string) => {
    const c = current(key)
    if (c) c.failures++
    else {
      if (counts.size >= MAX_ENTRIES) counts.delete(counts.keys().next().value!)
      counts.set(key, { failures: 1, since: now() })
    }
  }
  const wait = (key: string, limit: number) => {
    const c = current(key)
    return c && c.failures >= limit ? Math.ceil((c.since + WINDOW_MS - now()) / 1000) : 0
  }

  return {
    /** Seconds to wait before a sign-in of `email` from `ip` is tried; 0: now. */
    waitSeconds: (email: string, ip: string) =>
      Math.max(wait(account(email), PER_ACCOUNT), wait(address(ip), PER_ADDRESS)),
    failed(email: string, ip: string) {
      bump(account(email))
      bump(address(ip))
    },
    succeeded(email: string) {
      counts.delete(account(email))
    },
  }
}
