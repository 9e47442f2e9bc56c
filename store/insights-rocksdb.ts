// Insights on the embedded RocksDB: counts read from the indexes the stores keep, never from a
// listing of records. Events per bucket and name: one range of the name's index per name (P in an
// environment, N in all), bounded by the ID-time window of the range as queryEvents reads it
// (store/rocksdb.ts), plus the few off-clock entries of H; every index entry carries its receive
// time and dedup flag, so no event is read. Names come one at a time, in key order, by seeking
// past the last one, and only the top ones are kept: memory is (top + 1) × buckets. Runs and
// failed webhook requests are read within their ID-time window. Each aggregate reads at most
// `scanBudget` entries (an event read counting more), and says `truncated` past it.
import { keyPrefix, keyRange, type KeySpaceName } from '../core/keyspaces.ts'
import type { Rocks } from '../core/rocks.ts'
import type { WebhookRequestRecord } from './requests-types.ts'
import { createRocksEventStore } from './rocksdb.ts'
import type { RunDoc } from './runs-types.ts'
import { scanSchemaViolations } from './violations-scan.ts'
import {
  OFF_CLOCK_MS,
  indexEntries,
  internalIdOf,
  keyPart,
  readOffClockEntry,
  receivedAtHex,
  ulidFloor,
  type IndexEntry,
} from './rocksdb-index.ts'
import {
  bucketStarts,
  topSeries,
  type CountSeries,
  type EventCounts,
  type EventCountsQuery,
  type InsightsStore,
  type RunOutcomeCount,
  type WebhookFailureCount,
} from './insights-types.ts'

export interface RocksInsightsOptions {
  /** Index entries one aggregate may read; a record read costs RECORD_COST of them. */
  scanBudget?: number
  /** And the time it may take: a request must not wait on a count (a loaded machine reads slower). */
  timeBudgetMs?: number
}

/** ~0.3 s of reading on an idle machine (bench/dashboard's 100,000 events in ~0.15 s). */
export const DEFAULT_INSIGHTS_SCAN_BUDGET = 500_000
export const DEFAULT_INSIGHTS_TIME_BUDGET_MS = 2_000
/** Parsing a run or request record, against reading an index entry (bench/store-query's ratio). */
const RECORD_COST = 20
/**
 * A run's ID carries its event's time, and the run is queued after the event arrived: the window
 * of run IDs reaches back this far before the range, for events that waited in the log.
 */
export const RUN_LAG_MS = 60 * 60_000
const CHUNK = 128

type Named = CountSeries & { name: string }

export function createRocksInsights(rocks: Rocks, options: RocksInsightsOptions = {}): InsightsStore {
  const budget = options.scanBudget ?? DEFAULT_INSIGHTS_SCAN_BUDGET
  const timeBudgetMs = options.timeBudgetMs ?? DEFAULT_INSIGHTS_TIME_BUDGET_MS

  /** Counts what was read against the budgets (the clock looked at every 1024 entries); `spent` once one is used up. */
  function meter() {
    let read = 0
    let nextClock = 1024
    let spent = false
    const deadline = performance.now() + timeBudgetMs
    return {
      take(cost = 1) {
        read += cost
        if (read > budget) spent = true
        if (read >= nextClock) {
          nextClock = read + 1024
          if (performance.now() > deadline) spent = true
        }
        return !spent
      },
      get spent() {
        return spent
      },
    }
  }

  /** The names that have entries under `space`+`base`, in key order, one seek each. */
  async function* namesUnder(space: KeySpaceName, base: string, take: () => boolean): AsyncGenerator<string> {
    const head = keyPrefix(space, base)
    const end = keyRange(space, base).lt
    let gte = head
    for (;;) {
      if (!take()) return
      let next: string | undefined
      for await (const { key } of rocks.scan({ gte, lt: end, limit: 1 })) next = key
      if (next === undefined) return
      const rest = next.slice(head.length)
      const name = rest.slice(4, 4 + Number.parseInt(rest.slice(0, 4), 16))
      yield name
      gte = keyRange(space, base + keyPart(name)).lt
    }
  }

  async function eventCounts(q: EventCountsQuery): Promise<EventCounts> {
    const buckets = bucketStarts(q.from, q.to, q.bucketMs)
    const first = buckets[0] ?? q.from
    const slot = (receivedAt: number) => Math.floor((receivedAt - first) / q.bucketMs)
    const counted = (e: IndexEntry) => !e.duplicate && e.receivedAt >= q.from && e.receivedAt < q.to
    const window = { from: ulidFloor(q.from - OFF_CLOCK_MS), below: ulidFloor(q.to + OFF_CLOCK_MS) }
    const budgetLeft = meter()

    // Events received in the range whose IDs lie outside the window (rocksdb-index.ts: H).
    const late = new Map<string, Named>()
    const series = (map: Map<string, Named>, name: string) => {
      const s = map.get(name) ?? { name, total: 0, counts: new Array<number>(buckets.length).fill(0) }
      map.set(name, s)
      return s
    }
    const h = keyPrefix('eventsByReceivedAt')
    for await (const { key, value } of rocks.scan({ gte: h + receivedAtHex(q.from), lt: h + receivedAtHex(q.to) })) {
      if (!budgetLeft.take()) break
      const id = internalIdOf(key)
      if (id >= window.from && id < window.below) continue
      const e = readOffClockEntry(value)
      if (!counted(e) || (q.env !== undefined && e.env !== q.env) || (q.name !== undefined && e.name !== q.name))
        continue
      const s = series(late, e.name)
      s.total++
      s.counts[slot(e.receivedAt)]++
    }

    const space: KeySpaceName = q.env !== undefined ? 'eventsByEnvName' : 'eventsByName'
    const base = q.env !== undefined ? keyPart(q.env) : ''
    const take = () => budgetLeft.take()
    const names = q.name !== undefined ? [q.name] : namesUnder(space, base, take)
    let kept: Named[] = []
    const other: CountSeries = { total: 0, counts: new Array<number>(buckets.length).fill(0) }
    const offer = (s: Named) => {
      const next = topSeries([...kept, s], q.top, buckets.length)
      kept = next.series
      if (!next.other) return
      other.total += next.other.total
      for (let i = 0; i < buckets.length; i++) other.counts[i] += next.other.counts[i]
    }
    for await (const name of names) {
      const s = late.get(name) ?? { name, total: 0, counts: new Array<number>(buckets.length).fill(0) }
      late.delete(name)
      const sub = base + keyPart(name)
      for await (const e of indexEntries(rocks, keyPrefix(space, sub), keyRange(space, sub).lt, window)) {
        if (!budgetLeft.take()) break
        if (!counted(e)) continue
        s.total++
        s.counts[slot(e.receivedAt)]++
      }
      if (s.total > 0) offer(s)
      if (budgetLeft.spent) break
    }
    // Off-clock events of names the scan did not reach (it ran out of budget).
    for (const s of late.values()) offer(s)
    return { buckets, series: kept, other: other.total > 0 ? other : null, truncated: budgetLeft.spent }
  }

  const events = createRocksEventStore(rocks)
  return {
    eventCounts,
    schemaViolations: (q) => scanSchemaViolations(events, q),

    async webhookFailures(q) {
      const budgetLeft = meter()
      const counts = new Map<string, WebhookFailureCount>()
      const window = { from: ulidFloor(q.from - OFF_CLOCK_MS), below: ulidFloor(q.to + OFF_CLOCK_MS) }
      const count = (values: Array<Buffer | null>) => {
        for (const value of values) {
          if (!value) continue
          const record = JSON.parse(value.toString()) as WebhookRequestRecord
          const { receivedAt, webhookId } = record.request
          if (record.status !== 'failed' || receivedAt < q.from || receivedAt >= q.to) continue
          const code = record.error?.code ?? 'UNKNOWN'
          const row = counts.get(`${webhookId}\0${code}`) ?? { webhookId, code, count: 0 }
          row.count++
          counts.set(`${webhookId}\0${code}`, row)
        }
      }
      for (const webhookId of q.webhookIds) {
        const prefix = keyPrefix('webhookRequestsByStatus', `${webhookId}\0failed\0`)
        const records = (ids: string[]) => ids.map((id) => keyPrefix('webhookRequests', `${webhookId}\0${id}`))
        let ids: string[] = []
        for await (const { key } of rocks.scan({ gte: prefix + window.from, lt: prefix + window.below })) {
          if (!budgetLeft.take(RECORD_COST)) break
          ids.push(key.slice(prefix.length))
          if (ids.length < CHUNK) continue
          count(await rocks.getMany(records(ids)))
          ids = []
        }
        count(await rocks.getMany(records(ids)))
        if (budgetLeft.spent) break
      }
      const rows = [...counts.values()].sort(
        (a, b) => b.count - a.count || compare(a.webhookId, b.webhookId) || compare(a.code, b.code),
      )
      return { rows, truncated: budgetLeft.spent }
    },

    async runOutcomes(q) {
      const budgetLeft = meter()
      const counts = new Map<string, RunOutcomeCount>()
      const range = { gte: keyPrefix('runs', ulidFloor(q.from - RUN_LAG_MS)), lt: keyPrefix('runs', ulidFloor(q.to)) }
      for await (const { value } of rocks.scan(range)) {
        if (!budgetLeft.take(RECORD_COST)) break
        const run = JSON.parse(value.toString()) as RunDoc
        if (run.queuedAt < q.from || run.queuedAt >= q.to || (q.env !== undefined && run.env !== q.env)) continue
        const key = `${run.functionId}\0${run.status}`
        const row = counts.get(key) ?? { functionId: run.functionId, status: run.status, count: 0 }
        row.count++
        counts.set(key, row)
      }
      const rows = [...counts.values()].sort(
        (a, b) => compare(a.functionId, b.functionId) || compare(a.status, b.status),
      )
      return { rows, truncated: budgetLeft.spent }
    },

    close: async () => {},
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
