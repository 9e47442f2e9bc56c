// RunStore on the embedded RocksDB. Keys (prefix R):
//   `Rr<runId>` → run JSON
//   `Re<eventId>\0<runId>`, `Rf<functionId>\0<runId>`, `Rs<status>\0<runId>` → '' (indexes)
// Run IDs are ULIDs carrying their event's time, so every index scans newest first in reverse.
import type { Rocks, WriteOp } from '../core/rocks.ts'
import type { RunDoc, RunPage, RunQuery, RunStore } from './runs-types.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'

const docKey = (runId: string) => keyPrefix('runs', runId)
const eventKey = (eventId: string, runId: string) => keyPrefix('runsByEvent', `${eventId}\0${runId}`)
const functionKey = (functionId: string, runId: string) => keyPrefix('runsByFunction', `${functionId}\0${runId}`)
const statusKey = (status: string, runId: string) => keyPrefix('runsByStatus', `${status}\0${runId}`)
const CHUNK = 128

/** The deletes that take a stored run and its index entries away (retention, erasure). */
export function runDeleteOps(run: RunDoc): WriteOp[] {
  return [
    { type: 'del', key: docKey(run.runId) },
    ...(run.eventIds ?? [run.eventId]).map((eventId): WriteOp => ({ type: 'del', key: eventKey(eventId, run.runId) })),
    { type: 'del', key: functionKey(run.functionId, run.runId) },
    { type: 'del', key: statusKey(run.status, run.runId) },
  ]
}

export function createRocksRunStore(rocks: Rocks): RunStore {
  // Upserts read before they write; one at a time, so two snapshots of a run never race.
  let queue: Promise<unknown> = Promise.resolve()

  async function upsert(runs: RunDoc[]): Promise<void> {
    const newest = new Map<string, RunDoc>()
    for (const run of runs) {
      const seen = newest.get(run.runId)
      if (!seen || run.version >= seen.version) newest.set(run.runId, run)
    }
    const candidates = [...newest.values()]
    const stored = await rocks.getMany(candidates.map((r) => docKey(r.runId)))
    const ops: WriteOp[] = []
    candidates.forEach((run, i) => {
      const previous = stored[i] ? (JSON.parse(stored[i]!.toString()) as RunDoc) : null
      // Equal versions come from a redelivered record: either copy is right, keep the first.
      if (previous && previous.version >= run.version) return
      ops.push({ type: 'put', key: docKey(run.runId), value: JSON.stringify(run) })
      if (!previous) {
        for (const eventId of run.eventIds ?? [run.eventId])
          ops.push({ type: 'put', key: eventKey(eventId, run.runId), value: '' })
        ops.push({ type: 'put', key: functionKey(run.functionId, run.runId), value: '' })
      }
      if (previous && previous.status !== run.status)
        ops.push({ type: 'del', key: statusKey(previous.status, run.runId) })
      ops.push({ type: 'put', key: statusKey(run.status, run.runId), value: '' })
    })
    await rocks.write(ops)
  }

  async function getRun(runId: string): Promise<RunDoc | null> {
    const value = await rocks.get(docKey(runId))
    return value ? (JSON.parse(value.toString()) as RunDoc) : null
  }

  /** Run IDs from the narrowest index the query allows, newest first, below the cursor. */
  async function* runIds(q: RunQuery): AsyncGenerator<string> {
    const { gte: prefix, lt: end } =
      q.eventId !== undefined
        ? keyRange('runsByEvent', `${q.eventId}\0`)
        : q.functionId !== undefined
          ? keyRange('runsByFunction', `${q.functionId}\0`)
          : q.status !== undefined
            ? keyRange('runsByStatus', `${q.status}\0`)
            : keyRange('runs')
    for await (const { key } of rocks.scan({ gte: prefix, lt: q.cursor ? prefix + q.cursor : end, reverse: true }))
      yield key.slice(prefix.length)
  }

  function matches(run: RunDoc, q: RunQuery): boolean {
    return (
      (q.eventId === undefined || run.eventId === q.eventId || run.eventIds?.includes(q.eventId) === true) &&
      (q.functionId === undefined || run.functionId === q.functionId) &&
      (q.status === undefined || run.status === q.status) &&
      (q.env === undefined || run.env === q.env)
    )
  }

  return {
    upsertRuns(runs) {
      const next = queue.then(() => upsert(runs))
      queue = next.catch(() => {})
      return next
    },
    getRun,
    async queryRuns(q): Promise<RunPage> {
      const runs: RunDoc[] = []
      let chunk: string[] = []
      const take = async (): Promise<RunPage | undefined> => {
        const values = await rocks.getMany(chunk.map(docKey))
        chunk = []
        for (const value of values) {
          if (!value) continue
          const run = JSON.parse(value.toString()) as RunDoc
          if (!matches(run, q)) continue
          if (runs.length === q.limit) return { runs, nextCursor: runs[runs.length - 1].runId }
          runs.push(run)
        }
        return undefined
      }
      for await (const runId of runIds(q)) {
        chunk.push(runId)
        if (chunk.length < CHUNK) continue
        const page = await take()
        if (page) return page
      }
      return (await take()) ?? { runs, nextCursor: null }
    },
    close: async () => {},
  }
}
