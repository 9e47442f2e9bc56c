// A function's cron schedules, run by the owner of partition 0 of its topic (one owner at a time,
// handed over with the partition). Each tick is an event on `incoming` whose ID derives from the
// function and the scheduled time, so a tick sent twice (a crash before its tick was saved, or two
// owners during a handover) is one event to dedup, and one run. Ticks missed for a short while (a
// handover after a crash) still run, late; of those missed longer ago (no node ran the schedule),
// only the latest runs, so a schedule is never replayed in a burst.
import type { Logger } from 'pino'
import { createHash } from 'node:crypto'
import type { Output } from '../bus/output.ts'
import { RESERVED_PREFIX, type EventRecord } from '../core/event.ts'
import { parseCron, type Schedule } from '../core/cron.ts'
import { seededUlids } from '../core/ids.ts'
import { sleep } from '../core/retry.ts'
import type { FunctionSpec } from '../core/function.ts'
import type { RunnerState } from './state.ts'

/** The event a cron tick sends: it runs the scheduled function only (router). */
export const CRON_TICK = `${RESERVED_PREFIX}cron`
/** A failed send is tried again this much later. */
const RETRY_MS = 1000
/** Timers hold at most ~24 days; a later tick is waited for in steps. */
const MAX_SLEEP_MS = 60 * 60_000
/** Missed ticks this recent all run: longer than a consumer group takes to move a crashed owner's partition. */
export const CRON_CATCH_UP_MS = 60_000
/** At most this many of them, the latest. */
const CRON_CATCH_UP_TICKS = 10

/** The ticks to run now, in order, after the one last run at `lastMs`. */
export function missedTicks(schedule: Schedule, lastMs: number, nowMs: number): number[] {
  const ticks: number[] = []
  const horizon = nowMs - CRON_CATCH_UP_MS
  const older = schedule.latest(horizon)
  if (older !== null && older > lastMs) ticks.push(older)
  for (let at = schedule.next(Math.max(lastMs, horizon)); at <= nowMs; at = schedule.next(at)) ticks.push(at)
  return ticks.slice(-CRON_CATCH_UP_TICKS)
}

export function createCronSchedule(fn: FunctionSpec, incoming: Output<EventRecord>, log: Logger) {
  const schedules = fn.triggers.flatMap((t) => {
    if (!('cron' in t)) return []
    const parsed = parseCron(t.cron)
    return parsed.ok ? [parsed.value] : []
  })
  let running: { abort: AbortController; loops: Promise<void>[] } | undefined

  async function tick(state: RunnerState, schedule: Schedule, atMs: number): Promise<void> {
    await incoming.publish([tickEvent(fn, schedule.cron, atMs)])
    await state.save({ marks: [], parked: [], unparked: [], cronTicks: [{ cron: schedule.cron, atMs }] })
  }

  async function loop(state: RunnerState, schedule: Schedule, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const last = await state.lastCronTick(schedule.cron)
        if (last === null) {
          // A schedule seen for the first time starts from now: no tick of the past runs.
          await state.save({
            marks: [],
            parked: [],
            unparked: [],
            cronTicks: [{ cron: schedule.cron, atMs: Date.now() }],
          })
          continue
        }
        const missed = missedTicks(schedule, last, Date.now())
        for (const at of missed) await tick(state, schedule, at)
        if (missed.length > 0) continue
        const next = schedule.next(Math.max(last, Date.now()))
        const waitMs = next - Date.now()
        await sleep(Math.max(0, Math.min(waitMs, MAX_SLEEP_MS)), signal)
        if (!signal.aborted && waitMs <= MAX_SLEEP_MS) await tick(state, schedule, next)
      } catch (err) {
        if (signal.aborted) return
        log.warn({ err, cron: schedule.cron }, 'cron tick not sent; trying again')
        await sleep(RETRY_MS, signal)
      }
    }
  }

  return {
    start(state: RunnerState): void {
      if (schedules.length === 0 || running) return
      const abort = new AbortController()
      running = { abort, loops: schedules.map((s) => loop(state, s, abort.signal)) }
    },
    async stop(): Promise<void> {
      const current = running
      running = undefined
      current?.abort.abort()
      await Promise.all(current?.loops ?? [])
    },
  }
}

/** The tick's event: its ID from (env, function, schedule, time), so a repeat is a duplicate. */
export function tickEvent(fn: FunctionSpec, cron: string, atMs: number): EventRecord {
  const entropy = createHash('sha256').update(`${fn.env}\0${fn.key}\0${cron}\0${atMs}`).digest().subarray(0, 10)
  const [internalId] = seededUlids(`${atMs},${entropy.toString('base64')}`, 1)
  const now = Date.now()
  return {
    internalId,
    id: internalId,
    name: CRON_TICK,
    data: { cron, function_id: fn.key, scheduled_at: new Date(atMs).toISOString() },
    ts: atMs,
    env: fn.env,
    receivedAt: now,
    source: { kind: 'cron', functionId: fn.key, cron },
  }
}
