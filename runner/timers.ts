// The runner's timer loop: re-publishes parked records once due (retries, and pauses that reached
// their end), forgets old marks, and keeps long-parked records in a changelog's retention. It sleeps
// until the earliest due time, or until woken by a newly parked record.
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import { sleep } from '../core/retry.ts'
import type { FunctionRecord } from '../core/run-record.ts'
import type { RunnerState } from './state.ts'

const PARK_SCAN_LIMIT = 500
const IDLE_TIMER_CHECK_MS = 1_000
const MARK_EXPIRY_INTERVAL_MS = 60 * 60_000

export function createTimers(
  states: () => Iterable<RunnerState>,
  self: Output<FunctionRecord>,
  config: { markRetentionMs: number },
  log: Logger,
) {
  let stopping = false
  let woken = false
  let sleeping: AbortController | undefined
  let loop: Promise<void> | undefined

  /** Re-publishes parked records once due; only then forgets them (a crash re-publishes: fenced). */
  async function run(): Promise<void> {
    let nextExpiryAt = 0
    while (!stopping) {
      woken = false
      let next = Date.now() + IDLE_TIMER_CHECK_MS
      try {
        const expire = Date.now() >= nextExpiryAt
        for (const state of new Set(states())) {
          for (
            let due = await state.due(Date.now(), PARK_SCAN_LIMIT);
            due.length > 0;
            due = await state.due(Date.now(), PARK_SCAN_LIMIT)
          ) {
            await self.publish(due.map(({ dueAt: _, ...ready }) => ready))
            await state.unpark(due)
          }
          const dueAt = await state.nextDueAt()
          if (dueAt !== null) next = Math.min(next, dueAt)
          if (expire) {
            await state.expire(Date.now() - config.markRetentionMs)
            await state.refresh(Date.now())
          }
        }
        if (expire) nextExpiryAt = Date.now() + MARK_EXPIRY_INTERVAL_MS
      } catch (err) {
        log.error({ err }, 're-publishing due records failed; trying again')
      }
      if (stopping || woken) continue
      sleeping = new AbortController()
      await sleep(Math.max(0, next - Date.now()), sleeping.signal)
      sleeping = undefined
    }
  }

  return {
    /** A newly parked record may be due before the loop's next check. */
    wake(): void {
      woken = true
      sleeping?.abort()
    },
    start(): void {
      stopping = false
      loop = run()
    },
    async stop(): Promise<void> {
      stopping = true
      woken = true
      sleeping?.abort()
      await loop
    },
  }
}
