// Admission of queued records (flow control): a record runs when every concurrency slot of its run has
// room, and a run's first record when its throttle allows another start. Among the records that may
// run, the earliest in order goes first (priority moves a run's order earlier); each queue key is a
// FIFO of its own, so a hot key's backlog never holds back another key's records. Executions do not
// hold the consumer: the queue is durable in the runner state, and a record leaves it in the same
// write that records what its execution led to.
import type { Logger } from 'pino'
import type { RunRecord } from '../core/run-record.ts'
import type { FlowControl } from '../client/flow.ts'
import type { RunnerState } from './state.ts'
import { gcra } from './flow-view.ts'
import { HELD } from './hold.ts'

/** Concurrency slots shared by every function of the process (`scope: "env"` limits). */
const envSlots = new Map<string, number>()

interface QueueEntry {
  /** The order of the key's first queued record, for choosing among keys. */
  first: number
  /** Its first queued records that are not executing, once read (a cache, dropped when the queue changes). */
  heads?: RunRecord[]
  /** Counts the key's queue changes: a read that began before one is stale. */
  changes: number
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
  /** Runs executing now: a cancel must not end them mid-step (function-runner.ts). */
  const running = new Set<string>()
  let inFlight = 0
  let passing = false
  let again = false
  let timer: NodeJS.Timeout | undefined
  let stopped = false

  const slotsOf = (id: string) => (id.startsWith('env\0') ? envSlots : fnSlots)
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
          if (!entry.heads || entry.heads.length === 0) await readHeads(state, index, key, entry)
          const head = entry.heads?.[0]
          if (!head) continue
          if (running.has(head.runId)) {
            entry.heads = undefined // executing already (read before it started)
            continue
          }
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
          start(state, index, key, entry, head)
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

  function start(
    state: RunnerState,
    index: Map<string, QueueEntry>,
    key: string,
    entry: QueueEntry,
    record: RunRecord,
  ) {
    inFlight++
    take(record, 1)
    running.add(record.runId)
    entry.heads!.shift()
    const inState = executing.get(state) ?? executing.set(state, new Set()).get(state)!
    const done: Promise<void> = deps
      .execute(state, record)
      .catch((err) => {
        // Still queued: it is admitted again later (its outcome, if executed, is applied then).
        log.warn({ err, runId: record.runId }, 'a queued record did not run; it stays queued')
        wakeAt(Date.now() + 1000)
      })
      .finally(() => {
        inFlight--
        take(record, -1)
        running.delete(record.runId)
        inState.delete(done)
        // The run's next record may be queued already, behind the one that ran: read the key again.
        const current = index.get(key)
        if (current) {
          current.heads = undefined
          current.changes++
        } else if (queues.get(state) === index) index.set(key, { first: record.queue!.order, changes: 0 })
        wake()
      })
    inState.add(done)
  }

  /** The key's first queued records that are not executing, in order; the key is forgotten once empty. */
  async function readHeads(state: RunnerState, index: Map<string, QueueEntry>, key: string, entry: QueueEntry) {
    const changes = entry.changes
    const queued = await state.queueHead(key, HEADS_READ + running.size)
    // Records queued while this read was under way may be missing from it: read again next pass.
    if (entry.changes !== changes || index.get(key) !== entry) return
    if (queued.length === 0) {
      index.delete(key)
      return
    }
    entry.heads = queued.filter((r) => !running.has(r.runId)).slice(0, HEADS_READ)
    entry.first = (entry.heads[0] ?? queued[0]).queue!.order
  }

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
      for (const r of records) {
        if (r.queue!.key === HELD) continue
        const entry =
          index.get(r.queue!.key) ?? index.set(r.queue!.key, { first: r.queue!.order, changes: 0 }).get(r.queue!.key)!
        entry.first = Math.min(entry.first, r.queue!.order)
        entry.heads = undefined
        entry.changes++
      }
      wake()
    },
    /** Records taken out of the queue by the consumer (a cancel). */
    dequeued(state: RunnerState, records: RunRecord[]): void {
      const index = queues.get(state)
      for (const r of records) {
        const entry = index?.get(r.queue!.key)
        if (entry) {
          entry.heads = undefined
          entry.changes++
        }
      }
      wake()
    },
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(timer)
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 20))
    },
  }
}

/** Where a record waits: its queue key (the first concurrency or the throttle key) and its order. */
export function queuePlace(record: RunRecord): { key: string; order: number } {
  const keys = record.flow!
  const key = keys.slots[0]?.id.split('\0').at(-1) ?? keys.throttle ?? ''
  const at = record.dueAt ?? record.steps.at(-1)?.endedAt ?? record.failing?.endedAt ?? record.queuedAt
  return { key, order: at - keys.priorityMs }
}
