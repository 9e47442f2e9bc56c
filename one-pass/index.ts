// The embedded event path in one pass (docs/design.md, "One pass"): what dedup, the store sink and the
// router do to an event is done as it is published, and all of it is one RocksDB write with the
// records of the tick. The events a tick's publishes bring (Event API requests, webhook transforms,
// `step.sendEvent`, replays) form a group: one lookup of their dedup marks, then one write holding
// the events (once, in the store), their index entries and dedup marks, and the runs and wait messages
// the router makes of them. A publish resolves once that write is durable, so an acknowledged event
// is stored, marked and routed, or none of it happened. The same stage functions as distributed mode:
// originalsOf (dedup), insertOps (the event store's write), the router's routing.
import type { Output } from '../bus/output.ts'
import type { WriteOp } from '../core/rocks.ts'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import { callerIdEvents, counted, originalsOf } from '../dedup/index.ts'
import type { RocksDedupStore } from '../dedup/rocksdb.ts'
import type { RocksEventStore } from '../store/rocksdb.ts'
import type { Routing } from '../router/index.ts'

export interface OnePassDeps {
  /** Writes `ops` in the same RocksDB write as what the log takes in this tick (LocalLog.commit). */
  commit(ops: WriteOp[]): Promise<void>
  /** Starts that write at once, not at the end of the tick (LocalLog.writeNow). */
  writeNow(): void
  getMany(keys: string[]): Promise<Array<Buffer | null>>
  store: RocksEventStore
  dedup: RocksDedupStore
  /** The router's routing, once the function parts exist; undefined where no router runs. */
  routing(): Routing | undefined
}

/** The publishes gathered for the next pass: their events, and the promise they all wait on. */
interface Group {
  events: EventRecord[]
  settled: PromiseWithResolvers<void>
}

/** `incoming` in embedded mode: an Output whose publish stores, deduplicates and routes its events. */
export function createOnePass(deps: OnePassDeps): Output<EventRecord> {
  let gathering: Group | undefined
  let scheduled = false
  /** A group is being looked up: the next waits, gathering what comes meanwhile. */
  let busy = false
  /**
   * Dedup marks written by writes not yet known to be readable: a lookup may have read before such
   * a write was applied. Per key, the value and the write; dropped once no lookup that began before
   * its write resolved is still deciding (`afterLookup`).
   */
  const unapplied = new Map<string, { value: string; write: object }>()
  let afterLookup: Array<() => void> = []

  function schedule(): void {
    if (scheduled || busy || !gathering) return
    scheduled = true
    setImmediate(next)
  }

  async function next(): Promise<void> {
    scheduled = false
    const { events, settled } = gathering!
    gathering = undefined
    busy = true
    try {
      await pass(events, settled)
    } catch (err) {
      settled.reject(err)
    } finally {
      busy = false
      const released = afterLookup
      afterLookup = []
      for (const release of released) release()
      schedule()
    }
  }

  async function pass(events: EventRecord[], settled: PromiseWithResolvers<void>): Promise<void> {
    const withId = callerIdEvents(events)
    const unnamed = withId.length === events.length ? [] : events.filter((e) => e.id === e.internalId)
    const reads = deps.dedup.reads(withId, unnamed)
    const routing = deps.routing()
    const routed = routing !== undefined && !routing.idle()
    const [values] = await Promise.all([
      reads.keys.length > 0 ? deps.getMany(reads.keys) : [],
      // Every wait registered before the events were received is known: they are routed to it.
      routed ? routing.refresh() : undefined,
    ])
    // From here to the write, nothing awaits: the write and the routing's publishes are one tick's.
    const read = new Map(reads.keys.map((key, i) => [key, values[i]]))
    const currentValue = (key: string) => unapplied.get(key)?.value ?? read.get(key) ?? null
    const originals = originalsOf(events, withId, reads.found(currentValue))
    const accepted: EventRecord[] = []
    const stored: StoredEvent[] = []
    for (let i = 0; i < events.length; i++) {
      const original = originals[i]
      const event: StoredEvent = original === undefined ? events[i] : { ...events[i], duplicateOf: original }
      if (original === undefined) accepted.push(event)
      stored.push(event)
    }
    const marks = reads.markOps(accepted, currentValue)
    const ops = deps.store.insertOps(stored)
    const write = {}
    for (const op of marks) {
      ops.push(op)
      if (op.type === 'put') unapplied.set(op.key, { value: op.value as string, write })
    }
    const done = Promise.all([deps.commit(ops), routed ? routing.route(accepted, { together: true }) : undefined])
    // Everything of the pass is published: its write starts now, not after the next turn's poll phase
    // has parsed the requests that arrived meanwhile (docs/operations.md, "The pass's write, at once").
    deps.writeNow()
    // What the callbacks below keep until the write is durable: counts and the marks' keys, not the
    // events (which would live through the WAL sync, and so through V8's young generation).
    const acceptedCount = accepted.length
    const duplicateCount = events.length - acceptedCount
    const marked = marks.flatMap((op) => (op.type === 'put' ? [op.key] : []))
    const forget = () => {
      for (const key of marked) if (unapplied.get(key)?.write === write) unapplied.delete(key)
    }
    done.then(
      () => {
        counted.accepted.inc(acceptedCount)
        counted.duplicate.inc(duplicateCount)
        settled.resolve()
      },
      (err) => settled.reject(err),
    )
    // Once written (or failed), RocksDB answers for the marks: after the lookup under way, if any.
    done.finally(() => (busy ? afterLookup.push(forget) : forget())).catch(() => {})
  }

  return {
    publish(events) {
      if (events.length === 0) return Promise.resolve()
      gathering ??= { events: [], settled: Promise.withResolvers<void>() }
      for (const event of events) gathering.events.push(event)
      schedule()
      return gathering.settled.promise
    },
  }
}
