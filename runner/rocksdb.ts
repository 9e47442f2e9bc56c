// RunnerState on the embedded RocksDB, one key space per function:
//   `F<scope>\0<runId>` → the run's mark   (run IDs are ULIDs: expiry is one range delete)
//   `S<scope>\0<dueAt hex12>\0<runId>\0<seq>` → parked RunRecord JSON   (sorted by due time)
//   `Q<scope>\0<runId>` → `<dueAt hex12>\0<seq>` of the run's parked record   (a signal finds it)
//   `J<scope>\0<cron>` → the last cron tick run
//   `B<scope>\0<queue key>\0<order hex13>\0<eventId>\0<runId>\0<seq>` → a record waiting for admission
//   `A<scope>\0<runId>` → `<queue key>\0<order hex13>\0<eventId>\0<seq>` of the run's queued record
//   `K<scope>\0<name>\0<key>` → flow-control state (rate limits, throttles, batches, debounces, …)
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { seededUlids } from '../core/ids.ts'
import type { RunRecord } from '../core/run-record.ts'
import { decodeMark, encodeMark, NO_MARK, type RunnerState } from './state.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'

const hex12 = (n: number) => n.toString(16).padStart(12, '0')
const hex13 = (n: number) => Math.max(0, Math.round(n)).toString(16).padStart(13, '0')

export function createRocksRunnerState(rocks: Rocks, scope: string): RunnerState {
  const markPrefix = keyPrefix('runnerMarks', `${scope}\0`)
  const parkPrefix = keyPrefix('runnerParked', `${scope}\0`)
  const byRunPrefix = keyPrefix('runnerParkedByRun', `${scope}\0`)
  const cronPrefix = keyPrefix('runnerCron', `${scope}\0`)
  const queuePrefix = keyPrefix('runnerQueue', `${scope}\0`)
  const queuedByRunPrefix = keyPrefix('runnerQueuedByRun', `${scope}\0`)
  const flowPrefix = keyPrefix('runnerFlow', `${scope}\0`)
  // Within a millisecond, by the triggering event's ID: the events of one request keep their order.
  const queueTail = (r: RunRecord) => `${r.queue!.key}\0${hex13(r.queue!.order)}\0${r.event.internalId}`
  const queueKey = (r: RunRecord) => `${queuePrefix}${queueTail(r)}\0${r.runId}\0${r.seq}`
  const enqueue = (r: RunRecord): WriteOp[] => [
    { type: 'put', key: queueKey(r), value: JSON.stringify(r) },
    { type: 'put', key: queuedByRunPrefix + r.runId, value: `${queueTail(r)}\0${r.seq}` },
  ]
  const dequeue = (r: RunRecord): WriteOp[] => [
    { type: 'del', key: queueKey(r) },
    { type: 'del', key: queuedByRunPrefix + r.runId },
  ]
  const markKey = (runId: string) => markPrefix + runId
  const parkTail = (r: RunRecord) => `${hex12(r.dueAt ?? 0)}\0${r.seq}`
  const parkKey = (r: RunRecord) => `${parkPrefix}${hex12(r.dueAt ?? 0)}\0${r.runId}\0${r.seq}`
  const park = (r: RunRecord): WriteOp[] => [
    { type: 'put', key: parkKey(r), value: JSON.stringify(r) },
    { type: 'put', key: byRunPrefix + r.runId, value: parkTail(r) },
  ]
  const unpark = (r: RunRecord): WriteOp[] => [
    { type: 'del', key: parkKey(r) },
    // Only the run's current parked record is indexed; a newer one may have replaced it already.
    ...(r.seq >= 0 ? [{ type: 'del' as const, key: byRunPrefix + r.runId }] : []),
  ]

  /**
   * When the earliest parked record is due (null: none is parked), as last read, or undefined when
   * unknown. Every park and unpark of the scope goes through this object, so the timer loop, which
   * asks each function every second, reads nothing for a function with nothing due: with 200
   * functions its scans were ~1.5 % of a core on an idle server. `changes` counts writes begun, so
   * a read that a write overtook is not kept.
   */
  let earliest: number | null | undefined
  let changes = 0
  const writeParked = async (write: WriteOp[], parkedNow: RunRecord[], unparked: boolean) => {
    changes++
    await rocks.write(write)
    if (unparked) earliest = undefined
    else if (earliest !== undefined)
      for (const r of parkedNow) earliest = Math.min(earliest ?? Number.POSITIVE_INFINITY, r.dueAt ?? 0)
  }
  const readEarliest = async () => {
    if (earliest !== undefined) return earliest
    const at = changes
    let found: number | null = null
    for await (const { key } of rocks.scan({ ...keyRange('runnerParked', `${scope}\0`), limit: 1 }))
      found = parseInt(key.slice(parkPrefix.length, parkPrefix.length + 12), 16)
    if (at === changes) earliest = found
    return found
  }

  return {
    async processed(runIds) {
      const values = await rocks.getMany(runIds.map(markKey))
      return values.map((v) => (v ? decodeMark(v.toString()) : NO_MARK))
    },
    async save({ marks, parked: toPark, unparked, cronTicks = [], queued = [], dequeued = [], flow = [] }) {
      const write: WriteOp[] = [
        ...dequeued.flatMap(dequeue),
        ...unparked.flatMap(unpark),
        ...marks.map((m) => ({ type: 'put' as const, key: markKey(m.runId), value: encodeMark(m.mark) })),
        ...toPark.flatMap(park),
        ...cronTicks.map((t) => ({ type: 'put' as const, key: cronPrefix + t.cron, value: String(t.atMs) })),
        ...queued.flatMap(enqueue),
        ...flow.map(({ key, value }) =>
          value === null
            ? { type: 'del' as const, key: flowPrefix + key }
            : { type: 'put' as const, key: flowPrefix + key, value },
        ),
      ]
      if (toPark.length === 0 && unparked.length === 0) await rocks.write(write)
      else await writeParked(write, toPark, unparked.length > 0)
    },
    async flowGet(keys) {
      const values = await rocks.getMany(keys.map((k) => flowPrefix + k))
      return values.map((v) => (v ? v.toString() : null))
    },
    async queueHead(key, limit, after) {
      const records: RunRecord[] = []
      const range = keyRange('runnerQueue', `${scope}\0${key}\0`)
      // Past `after`: without an upper bound on the iterator, a scan from the key's start steps over
      // every deleted record of the key that compaction has not dropped yet.
      const bounds = after ? { gt: queueKey(after), lt: range.lt } : range
      for await (const { value } of rocks.scan({ ...bounds, limit }))
        records.push(JSON.parse(value.toString()) as RunRecord)
      return records
    },
    async queueIndex() {
      const index = new Map<string, { count: number; first: number }>()
      for await (const { key } of rocks.scan({ ...keyRange('runnerQueue', `${scope}\0`), batch: 256 })) {
        const rest = key.slice(queuePrefix.length)
        const [queue, order] = rest.split('\0')
        const entry = index.get(queue)
        if (entry) entry.count++
        else index.set(queue, { count: 1, first: parseInt(order, 16) })
      }
      return index
    },
    async queuedOf(runId) {
      const tail = await rocks.get(queuedByRunPrefix + runId)
      if (!tail) return null
      const [queue, order, eventId, seq] = tail.toString().split('\0')
      const value = await rocks.get(`${queuePrefix}${queue}\0${order}\0${eventId}\0${runId}\0${seq}`)
      return value ? (JSON.parse(value.toString()) as RunRecord) : null
    },
    async parkedOf(runId) {
      const tail = await rocks.get(byRunPrefix + runId)
      if (!tail) return null
      const [dueAt, seq] = tail.toString().split('\0')
      const value = await rocks.get(`${parkPrefix}${dueAt}\0${runId}\0${seq}`)
      return value ? (JSON.parse(value.toString()) as RunRecord) : null
    },
    async due(nowMs, limit) {
      const next = await readEarliest()
      if (next === null || next > nowMs) return []
      const records: RunRecord[] = []
      const upTo = `${parkPrefix}${hex12(nowMs + 1)}`
      for await (const { value } of rocks.scan({ gte: parkPrefix, lt: upTo, limit })) {
        records.push(JSON.parse(value.toString()) as RunRecord)
        if (records.length === limit) break
      }
      return records
    },
    nextDueAt: readEarliest,
    async unpark(records) {
      // Re-published at their due time: the index entry goes only if it still names this record.
      const current = await rocks.getMany(records.map((r) => byRunPrefix + r.runId))
      await writeParked(
        records.flatMap((r, i) => [
          { type: 'del' as const, key: parkKey(r) },
          ...(current[i]?.toString() === parkTail(r) ? [{ type: 'del' as const, key: byRunPrefix + r.runId }] : []),
        ]),
        [],
        true,
      )
    },
    async lastCronTick(cron) {
      const value = await rocks.get(cronPrefix + cron)
      return value ? Number(value.toString()) : null
    },
    async expire(beforeMs) {
      const timePrefix = seededUlids(`${Math.max(0, beforeMs)},AAAAAAAAAAAAAA==`, 1)[0].slice(0, 10)
      await rocks.write([{ type: 'delRange', start: markPrefix, end: markPrefix + timePrefix }])
    },
    refresh: async () => {},
    close: async () => {},
  }
}

/** Every record parked in `scope`, by due time. */
export async function* parkedRecords(rocks: Rocks, scope: string): AsyncIterable<RunRecord> {
  for await (const { value } of rocks.scan({ ...keyRange('runnerParked', `${scope}\0`), batch: 256 }))
    yield JSON.parse(value.toString()) as RunRecord
}

/** The last tick of every cron schedule in `scope`. */
export async function* cronTicks(rocks: Rocks, scope: string): AsyncIterable<{ cron: string; atMs: number }> {
  const prefix = keyPrefix('runnerCron', `${scope}\0`)
  for await (const { key, value } of rocks.scan(keyRange('runnerCron', `${scope}\0`)))
    yield { cron: key.slice(prefix.length), atMs: Number(value.toString()) }
}

/** Every queued record and flow-control entry of `scope` (what a changelog re-writes). */
export async function* flowEntries(
  rocks: Rocks,
  scope: string,
): AsyncIterable<{ queued: RunRecord } | { key: string; value: string }> {
  for await (const { value } of rocks.scan({ ...keyRange('runnerQueue', `${scope}\0`), batch: 256 }))
    yield { queued: JSON.parse(value.toString()) as RunRecord }
  const prefix = keyPrefix('runnerFlow', `${scope}\0`)
  for await (const { key, value } of rocks.scan({ ...keyRange('runnerFlow', `${scope}\0`), batch: 256 }))
    yield { key: key.slice(prefix.length), value: value.toString() }
}
