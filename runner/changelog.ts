// The RunnerState of one partition of a function's topic in distributed mode: the local RocksDB
// state (runner/rocksdb.ts, under a per-partition scope) backed by a compacted changelog topic,
// so marks and parked retries survive the loss of the node that held them (a pod rescheduled
// with an empty disk): whoever is assigned partition N restores from partition N of the changelog.
//
// Changelog records go to the partition of the state they belong to (explicit partition, not the
// key's hash). Keys: `m\0<runId>` → the run's mark; `p\0<runId>\0<seq>` → the parked record's
// JSON, and an empty value (tombstone) once it is re-published or resumed; `c\0<cron>` → the
// last cron tick. Record timestamps are the runs' times for marks, so retention (set where the
// topic is created) ages them out as expiry does; parked records and ticks are stamped when
// written, and re-written by `refresh` before retention could drop them (a sleep may last a year).
import type { Logger } from 'pino'
import type { Bus, BusRecord } from '../bus/types.ts'
import type { Rocks } from '../core/rocks.ts'
import { ulidTime } from '../core/ids.ts'
import type { RunRecord } from '../core/run-record.ts'
import { createRocksRunnerState, cronTicks, flowEntries, parkedRecords } from './rocksdb.ts'
import { decodeMark, encodeMark, type RunnerState } from './state.ts'
import { deleteRange } from '../core/keyspaces.ts'

export interface ChangelogRunnerOptions {
  rocks: Rocks
  bus: Bus
  /** Compacted, with the partition count of the function's topic. */
  topic: string
  /** The function's key space in the local RocksDB. */
  scope: string
  /** The topic's retention: an entry older than this may be gone. */
  retentionMs: number
  partition: number
  log: Logger
}

export async function openChangelogRunnerState(options: ChangelogRunnerOptions): Promise<RunnerState> {
  const { rocks, bus, topic, partition } = options
  const scope = `${options.scope}/p${partition}`
  // Whatever the local disk held for this partition (from an earlier assignment) may be stale.
  await rocks.write(
    (
      [
        'runnerMarks',
        'runnerParked',
        'runnerParkedByRun',
        'runnerCron',
        'runnerQueue',
        'runnerQueuedByRun',
        'runnerFlow',
      ] as const
    ).map((space) => deleteRange(space, `${scope}\0`)),
  )
  const local = createRocksRunnerState(rocks, scope)

  // The newest value per key wins, as compaction would have it; then applied in one go.
  const latest = new Map<string, Buffer>()
  let oldestStamp = Number.POSITIVE_INFINITY
  await bus.readPartition(topic, partition, async (records) => {
    for (const r of records) latest.set(r.key, r.value)
    for (const r of records)
      if (r.key.startsWith('p\0') && r.value.length > 0) oldestStamp = Math.min(oldestStamp, r.timestampMs)
  })
  const marks: Array<{ runId: string; mark: ReturnType<typeof decodeMark> }> = []
  const parked: RunRecord[] = []
  const ticks: Array<{ cron: string; atMs: number }> = []
  const queued: RunRecord[] = []
  const flow: Array<{ key: string; value: string }> = []
  for (const [key, value] of latest) {
    if (value.length === 0) continue
    if (key.startsWith('m\0')) marks.push({ runId: key.slice(2), mark: decodeMark(value.toString()) })
    else if (key.startsWith('p\0')) parked.push(JSON.parse(value.toString()) as RunRecord)
    else if (key.startsWith('c\0')) ticks.push({ cron: key.slice(2), atMs: Number(value.toString()) })
    else if (key.startsWith('q\0')) queued.push(JSON.parse(value.toString()) as RunRecord)
    else if (key.startsWith('f\0')) flow.push({ key: key.slice(2), value: value.toString() })
  }
  // A run has one parked record at a time; older ones of a run are leftovers of a crash (fenced by its mark).
  await local.save({ marks, parked, unparked: [], cronTicks: ticks, queued, flow })
  options.log.info(
    { topic, partition, marks: marks.length, parked: parked.length },
    'runner partition restored from its changelog',
  )

  // Re-written every half retention, so no parked entry is older than the retention allows.
  const halfRetention = Math.floor(options.retentionMs / 2)
  let nextRefreshAt = Math.min(Date.now() + halfRetention, oldestStamp + halfRetention)
  const record = (key: string, value: string, atMs: number): BusRecord => ({ key, value, partition, timestampMs: atMs })
  const parkKey = (r: RunRecord) => `p\0${r.runId}\0${r.seq}`
  const queuedKey = (r: RunRecord) => `q\0${r.runId}\0${r.seq}`

  return {
    processed: (runIds) => local.processed(runIds),
    async save(update) {
      const now = Date.now()
      const changes = [
        ...update.unparked.map((r) => record(parkKey(r), '', now)),
        ...update.marks.map((m) => record(`m\0${m.runId}`, encodeMark(m.mark), ulidTime(m.runId))),
        ...update.parked.map((r) => record(parkKey(r), JSON.stringify(r), now)),
        ...(update.cronTicks ?? []).map((t) => record(`c\0${t.cron}`, String(t.atMs), now)),
        ...(update.dequeued ?? []).map((r) => record(queuedKey(r), '', now)),
        ...(update.queued ?? []).map((r) => record(queuedKey(r), JSON.stringify(r), now)),
        ...(update.flow ?? []).map((f) => record(`f\0${f.key}`, f.value ?? '', now)),
      ]
      // Both must hold before the runner commits its batch; a failure redelivers the batch.
      await Promise.all([changes.length > 0 ? bus.publish(topic, changes) : undefined, local.save(update)])
    },
    parkedOf: (runId) => local.parkedOf(runId),
    flowGet: (keys) => local.flowGet(keys),
    queueHead: (key, limit, after) => local.queueHead(key, limit, after),
    queueIndex: () => local.queueIndex(),
    queuedOf: (runId) => local.queuedOf(runId),
    lastCronTick: (cron) => local.lastCronTick(cron),
    due: (nowMs, limit) => local.due(nowMs, limit),
    nextDueAt: () => local.nextDueAt(),
    async unpark(records) {
      // Re-published already: a crash before these tombstones re-publishes again, and the mark fences it.
      await Promise.all([
        bus.publish(
          topic,
          records.map((r) => record(parkKey(r), '', Date.now())),
        ),
        local.unpark(records),
      ])
    },
    expire: (beforeMs) => local.expire(beforeMs),
    async refresh(nowMs) {
      if (nowMs < nextRefreshAt) return
      let page: BusRecord[] = []
      for await (const r of parkedRecords(rocks, scope)) {
        page.push(record(parkKey(r), JSON.stringify(r), nowMs))
        if (page.length === 500) {
          await bus.publish(topic, page)
          page = []
        }
      }
      for await (const tick of cronTicks(rocks, scope)) page.push(record(`c\0${tick.cron}`, String(tick.atMs), nowMs))
      for await (const entry of flowEntries(rocks, scope))
        page.push(
          'queued' in entry
            ? record(queuedKey(entry.queued), JSON.stringify(entry.queued), nowMs)
            : record(`f\0${entry.key}`, entry.value, nowMs),
        )
      if (page.length > 0) await bus.publish(topic, page)
      nextRefreshAt = nowMs + halfRetention
    },
    close: () => local.close(),
  }
}
