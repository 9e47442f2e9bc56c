// Admission of queued records (flow control): a record runs when every concurrency slot of its run has
// room, and a run's first record when its throttle allows another start. Among the records that may
// run, the earliest in order goes first (priority moves a run's order earlier); each queue key is a
// FIFO of its own, so a hot key's backlog never holds back another key's records. Executions do not
// hold the consumer: the queue is durable in the runner state, and a record leaves it in the same
// write that records what its execution led to.
import type { Logger } from 'pino'
import type { RunRecord } from '../core/run-record.ts'
import type { FlowControl } from '../core/flow.ts'
import type { RunnerState } from './state.ts'
import { gcra } from './flow-view.ts'
import { HELD } from './hold.ts'

/** Concurrency slots shared by every function of the process (`scope: "env"` limits). */
const envSlots = new Map<string, number>()
/** The schedulers that count env slots: one freed may let another function's record run. */
const envWakers = new Set<() => void>()

interface QueueEntry {
  /** The order of the key's first queued record, for choosing among keys. */
  first: number
  /**
   * The key's first queued records that are not executing, in queue order, once read: every one up to
   * `bound`, or, without a bound, all of them. Kept up to date as records are queued, admitted and
   * taken out, so the state is read again only once they ran out (from past `bound`).
   */
  heads?: RunRecord[]
  /** The last record a full read returned: records after it are not in `heads`. */
  bound?: RunRecord
  /** Counts the key's queue changes: a read that began before one is stale. */
  changes: number
}

/** Queue order, as the state stores it: order, then event, run and seq (runner/rocksdb.ts). */
function compare(a: RunRecord, b: RunRecord): number {
  return (
    a.queue!.order - b.queue!.order ||
    (a.event.internalId < b.event.internalId ? -1 : a.event.internalId > b.event.internalId ? 1 : 0) ||
    (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0) ||
    (String(a.seq) < String(b.seq) ? -1 : String(a.seq) > String(b.seq) ? 1 : 0)
  )
}

/** Puts `record` into its place in `heads` (sorted), once. */
function insert(heads: RunRecord[], record: RunRecord): void {
  let at = heads.length
  while (at > 0 && compare(heads[at - 1], record) > 0) at--
  if (at > 0 && heads[at - 1].runId === record.runId && heads[at - 1].seq === record.seq) return
  heads.splice(at, 0, record)
}

const HEADS_READ = 16

export interface SchedulerDeps {
  flow: FlowControl
  /** Executes a queued record and records what it led to (taking it out of the queue); resolves when saved. */
  execute(state: RunnerState, record: RunRecord): Promise<void>
  log: Logger
}

export function createScheduler(deps: SchedulerDeps, config: { maxInFlight: number }) {
  const { flow, log } = deps
  const queues = new Map<RunnerState, Map<string, QueueEntry>>()
  /** Executions in flight per state: a partition taken away waits for its own. */
  const executing = new Map<RunnerState, Set<Promise<void>>>()
  const fnSlots = new Map<string, number>()
  const throttles = new Map<string, number>()
  /** Runs executing now, with the seq of their record: a cancel must not end them mid-step (function-runner.ts). */
  const running = new Map<string, number>()
  let inFlight = 0
  let passing = false
  let again = false
  let timer: NodeJS.Timeout | undefined
  let stopped = false

  const isEnv = (id: string) => id.startsWith('env\0')
  const slotsOf = (id: string) => (isEnv(id) ? envSlots : fnSlots)
  const hasRoom = (record: RunRecord) =>
    (record.flow?.slots ?? []).every(({ id, limit }) => (slotsOf(id).get(id) ?? 0) < limit)
  const take = (record: RunRecord, by: 1 | -1) => {
    for (const { id } of record.flow?.slots ?? []) {
      const slots = slotsOf(id)
      const n = (slots.get(id) ?? 0) + by
      if (n > 0) slots.set(id, n)
      else slots.delete(id)
    }
  }

  function wake(): void {
    if (stopped) return
    if (passing) {
      again = true
      return
    }
    setImmediate(() => void pass())
  }

  function wakeAt(atMs: number): void {
    const delay = Math.max(0, atMs - Date.now())
    if (timer && timer.hasRef()) clearTimeout(timer)
    timer = setTimeout(wake, Math.min(delay, 60_000))
  }

  async function pass(): Promise<void> {
    if (passing || stopped) return
    passing = true
    let earliest = Number.POSITIVE_INFINITY
    try {
      for (const [state, index] of queues) {
        const candidates = [...index.entries()].sort((a, b) => a[1].first - b[1].first)
        for (const [key, entry] of candidates) {
          if (inFlight >= config.maxInFlight) break
          if (!entry.heads || (entry.heads.length === 0 && entry.bound)) await readHeads(state, index, key, entry)
          if (entry.heads?.length === 0 && !entry.bound && index.get(key) === entry) {
            index.delete(key) // nothing queued under it: a record queued later makes it again
            continue
          }
          const head = entry.heads?.[0]
          if (!head) continue
          // Its previous record still executes: it goes once that one is recorded.
          if (running.has(head.runId)) continue
          if (!hasRoom(head)) continue
          if (head.seq === 0 && flow.throttle && head.flow?.throttle !== undefined) {
            const { limit, periodMs, burst } = flow.throttle
            const decision = gcra(throttles.get(head.flow.throttle) ?? null, Date.now(), limit, periodMs, burst)
            if (!decision.allowed) {
              earliest = Math.min(earliest, decision.at)
              continue
            }
            throttles.set(head.flow.throttle, decision.next)
          }
          start(state, index, entry, head)
        }
      }
    } catch (err) {
      log.warn({ err }, 'flow control: admitting queued records failed; trying again')
      earliest = Math.min(earliest, Date.now() + 1000)
    } finally {
      passing = false
    }
    if (earliest < Number.POSITIVE_INFINITY) wakeAt(earliest)
    if (again) {
      again = false
      wake()
    }
  }

  function start(state: RunnerState, index: Map<string, QueueEntry>, entry: QueueEntry, record: RunRecord) {
    inFlight++
    take(record, 1)
    running.set(record.runId, record.seq)
    entry.heads!.shift()
    const inState = executing.get(state) ?? executing.set(state, new Set()).get(state)!
    const done: Promise<void> = deps
      .execute(state, record)
      .catch((err) => {
        // Still queued: it is admitted again in a second (its outcome, if executed, is applied then).
        log.warn({ err, runId: record.runId }, 'a queued record did not run; it stays queued')
        setTimeout(() => {
          if (queues.get(state) === index) remember(index, record)
          wake()
        }, 1000).unref()
      })
      .finally(() => {
        inFlight--
        take(record, -1)
        running.delete(record.runId)
        inState.delete(done)
        if (record.flow?.slots.some(({ id }) => isEnv(id))) for (const w of envWakers) w()
        else wake()
      })
    inState.add(done)
  }

  /** A record queued under its key: in the key's heads when it falls within them. */
  function remember(index: Map<string, QueueEntry>, record: RunRecord): void {
    const key = record.queue!.key
    // The index knows every key with queued records: a key it lacks has none but this one.
    const entry = index.get(key) ?? index.set(key, { first: record.queue!.order, heads: [], changes: 0 }).get(key)!
    entry.first = Math.min(entry.first, record.queue!.order)
    entry.changes++
    if (entry.heads && (entry.bound === undefined || compare(record, entry.bound) <= 0)) insert(entry.heads, record)
  }

  /** Reads the key's first queued records that are not executing, in order (past `bound` once the heads ran out). */
  async function readHeads(state: RunnerState, index: Map<string, QueueEntry>, key: string, entry: QueueEntry) {
    const changes = entry.changes
    const limit = HEADS_READ + running.size
    const after = entry.heads?.length === 0 ? entry.bound : undefined
    const read = await state.queueHead(key, limit, after)
    // Records queued while this read was under way may be missing from it: read again next pass.
    if (entry.changes !== changes || index.get(key) !== entry) return
    entry.heads = read.filter((r) => running.get(r.runId) !== r.seq)
    entry.bound = read.length === limit ? read.at(-1) : undefined
    const first = entry.heads[0] ?? read[0]
    if (first) entry.first = first.queue!.order
  }

  if (flow.concurrency?.some((c) => c.scope === 'env')) envWakers.add(wake)

  return {
    running: (runId: string) => running.has(runId),
    /** A partition's state was opened: its queue is read back. */
    async open(state: RunnerState): Promise<void> {
      if (queues.has(state)) return
      const index = new Map<string, QueueEntry>()
      for (const [key, { first }] of await state.queueIndex()) if (key !== HELD) index.set(key, { first, changes: 0 })
      queues.set(state, index)
      wake()
    },
    /** A partition taken away: nothing more is admitted from it, and what executes finishes first. */
    async close(state: RunnerState): Promise<void> {
      queues.delete(state)
      await Promise.allSettled([...(executing.get(state) ?? [])])
      executing.delete(state)
    },
    /** Records just queued (durably) in `state`. */
    queued(state: RunnerState, records: RunRecord[]): void {
      const index = queues.get(state)
      if (!index) return
      for (const r of records) if (r.queue!.key !== HELD) remember(index, r)
      wake()
    },
    /** Records taken out of the queue by the consumer (a cancel). */
    dequeued(state: RunnerState, records: RunRecord[]): void {
      const index = queues.get(state)
      for (const r of records) {
        const entry = index?.get(r.queue!.key)
        if (!entry) continue
        entry.changes++
        const at = entry.heads?.findIndex((h) => h.runId === r.runId && h.seq === r.seq) ?? -1
        if (at >= 0) entry.heads!.splice(at, 1)
      }
      wake()
    },
    async stop(): Promise<void> {
      stopped = true
      envWakers.delete(wake)
      clearTimeout(timer)
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 20))
    },
  }
}

/** Where a record waits: its queue key (the first concurrency or the throttle key) and its order. */
export function queuePlace(record: RunRecord): { key: string; order: number } {
  const keys = record.flow!
  const key = keys.slots[0]?.id.split('\0').at(-1) ?? keys.throttle ?? ''
  // By the run's own queue time, for every record of it: a run that started goes before runs queued
  // after it, so a backlog finishes the runs it started instead of starting them all first.
  return { key, order: record.queuedAt - keys.priorityMs }
}
