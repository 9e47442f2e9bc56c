// The RunnerState of one partition of a function's topic in distributed mode: the local RocksDB
// state (runner/rocksdb.ts, under a per-partition scope) backed by a compacted changelog topic,
// so marks and parked retries survive the loss of the node that held them (a pod rescheduled
// with an empty disk): whoever is assigned partition N restores from partition N of the changelog.
//
// Changelog records go to the partition of the state they belong to (explicit partition, not the
// key's hash). Keys: `m\0<runId>` → highest processed seq; `p\0<runId>\0<seq>` → the parked
// record's JSON, and an empty value (tombstone) once it is re-published. Record timestamps are
// the runs' times for marks, so retention (set where the topic is created) ages them out as
// expiry does; parked records are stamped when parked.
import type { Logger } from 'pino'
import type { Bus, BusRecord } from '../bus/types.ts'
import type { Rocks } from '../core/rocks.ts'
import { ulidTime } from '../core/ids.ts'
import type { RunRecord } from '../core/run-record.ts'
import { createRocksRunnerState } from './rocksdb.ts'
import type { RunnerState } from './state.ts'
import { deleteRange } from '../core/keyspaces.ts'

export interface ChangelogRunnerOptions {
  rocks: Rocks
  bus: Bus
  /** Compacted, with the partition count of the function's topic. */
  topic: string
  /** The function's key space in the local RocksDB. */
  scope: string
  partition: number
  log: Logger
}

export async function openChangelogRunnerState(options: ChangelogRunnerOptions): Promise<RunnerState> {
  const { rocks, bus, topic, partition } = options
  const scope = `${options.scope}/p${partition}`
  // Whatever the local disk held for this partition (from an earlier assignment) may be stale.
  await rocks.write([deleteRange('runnerMarks', `${scope}\0`), deleteRange('runnerParked', `${scope}\0`)])
  const local = createRocksRunnerState(rocks, scope)

  // The newest value per key wins, as compaction would have it; then applied in one go.
  const latest = new Map<string, Buffer>()
  await bus.readPartition(topic, partition, async (records) => {
    for (const r of records) latest.set(r.key, r.value)
  })
  const marks: Array<{ runId: string; seq: number }> = []
  const parked: RunRecord[] = []
  for (const [key, value] of latest) {
    if (value.length === 0) continue
    if (key.startsWith('m\0')) marks.push({ runId: key.slice(2), seq: Number(value.toString()) })
    else if (key.startsWith('p\0')) parked.push(JSON.parse(value.toString()) as RunRecord)
  }
  await local.save({ processed: marks, parked })
  options.log.info(
    { topic, partition, marks: marks.length, parked: parked.length },
    'runner partition restored from its changelog',
  )

  const record = (key: string, value: string, atMs: number): BusRecord => ({ key, value, partition, timestampMs: atMs })
  const parkKey = (r: RunRecord) => `p\0${r.runId}\0${r.seq}`

  return {
    processed: (runIds) => local.processed(runIds),
    async save(update) {
      const changes = [
        ...update.processed.map((m) => record(`m\0${m.runId}`, String(m.seq), ulidTime(m.runId))),
        ...update.parked.map((r) => record(parkKey(r), JSON.stringify(r), Date.now())),
      ]
      // Both must hold before the runner commits its batch; a failure redelivers the batch.
      await Promise.all([changes.length > 0 ? bus.publish(topic, changes) : undefined, local.save(update)])
    },
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
    close: () => local.close(),
  }
}
