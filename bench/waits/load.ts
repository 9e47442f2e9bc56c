// A steady open-loop load for bench/waits: the rate holds whatever the server's answer times.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Child } from '../lib.ts'
import { send } from './server.ts'

const TICK_MS = 10
const MAX_IN_FLIGHT = 32

/**
 * `rate` events/s made by `make(n)` until `until` (ms): a batch every 10 ms whether or not earlier
 * ones have answered, at most 32 requests in flight; a batch due while 32 wait is skipped (counted).
 * Rate 0 only waits. Returns the events/s the server accepted.
 */
export async function steadyLoad(
  server: Child,
  rate: number,
  until: number,
  make: (n: number) => Record<string, unknown>,
): Promise<{ eventsPerSec: number; sent: number; skipped: number }> {
  const started = Date.now()
  if (rate === 0) {
    await sleep(Math.max(0, until - started))
    return { eventsPerSec: 0, sent: 0, skipped: 0 }
  }
  const inFlight = new Set<Promise<void>>()
  let sent = 0
  let skipped = 0
  let n = 0
  for (let tick = 0; Date.now() < until; tick++) {
    const due = started + tick * TICK_MS
    const wait = due - Date.now()
    if (wait > 0) await sleep(wait)
    const size = Math.floor(((tick + 1) * rate * TICK_MS) / 1000) - Math.floor((tick * rate * TICK_MS) / 1000)
    if (size === 0) continue
    if (inFlight.size >= MAX_IN_FLIGHT) {
      skipped += size
      continue
    }
    const batch = Array.from({ length: size }, () => make(n++))
    const request = send(server, batch).then(() => {
      sent += size
    })
    inFlight.add(request)
    void request.finally(() => inFlight.delete(request))
  }
  await Promise.all(inFlight)
  return { eventsPerSec: Math.round(sent / ((Date.now() - started) / 1000)), sent, skipped }
}
