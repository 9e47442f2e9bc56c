// RunnerState on the embedded RocksDB, one key space per function:
//   `F<scope>\0<runId>` → highest processed seq   (run IDs are ULIDs: expiry is one range delete)
//   `S<scope>\0<dueAt hex12>\0<runId>\0<seq>` → parked RunRecord JSON   (sorted by due time)
import type { Rocks } from '../core/rocks.ts'
import { seededUlids } from '../core/ids.ts'
import type { RunRecord } from '../core/run-record.ts'
import type { RunnerState } from './state.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'

export function createRocksRunnerState(rocks: Rocks, scope: string): RunnerState {
  const markPrefix = keyPrefix('runnerMarks', `${scope}\0`)
  const parkPrefix = keyPrefix('runnerParked', `${scope}\0`)
  const markKey = (runId: string) => markPrefix + runId
  const parkKey = (r: RunRecord) =>
    `${parkPrefix}${(r.dueAt ?? 0).toString(16).padStart(12, '0')}\0${r.runId}\0${r.seq}`

  return {
    async processed(runIds) {
      const values = await rocks.getMany(runIds.map(markKey))
      return values.map((v) => (v ? Number(v.toString()) : -1))
    },
    async save({ processed, parked }) {
      await rocks.write([
        ...processed.map((m) => ({ type: 'put' as const, key: markKey(m.runId), value: String(m.seq) })),
        ...parked.map((r) => ({ type: 'put' as const, key: parkKey(r), value: JSON.stringify(r) })),
      ])
    },
    async due(nowMs, limit) {
      const records: RunRecord[] = []
      const upTo = `${parkPrefix}${(nowMs + 1).toString(16).padStart(12, '0')}`
      for await (const { value } of rocks.scan({ gte: parkPrefix, lt: upTo, limit })) {
        records.push(JSON.parse(value.toString()) as RunRecord)
        if (records.length === limit) break
      }
      return records
    },
    async nextDueAt() {
      for await (const { key } of rocks.scan({ ...keyRange('runnerParked', `${scope}\0`), limit: 1 })) {
        return parseInt(key.slice(parkPrefix.length, parkPrefix.length + 12), 16)
      }
      return null
    },
    async unpark(records) {
      await rocks.write(records.map((r) => ({ type: 'del', key: parkKey(r) })))
    },
    async expire(beforeMs) {
      const timePrefix = seededUlids(`${Math.max(0, beforeMs)},AAAAAAAAAAAAAA==`, 1)[0].slice(0, 10)
      await rocks.write([{ type: 'delRange', start: markPrefix, end: markPrefix + timePrefix }])
    },
    close: async () => {},
  }
}
