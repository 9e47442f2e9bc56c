// Retention of the embedded event store (SLUICE_EVENT_RETENTION_MS): the events whose IDs are older
// than a time go, with their index and off-clock entries (layout: rocksdb-index.ts), without reading
// them: events are keyed by ID, so they go in one range delete; an index value holds one
// millisecond's events under the largest of their IDs, so per name, env, and env and name (few:
// one seek each finds the next) one range delete takes every value older than the cutoff's
// millisecond. Dedup ids are many (one per event that has one): their entries are swept by a scan
// of that index, which the caller asks for about once per retention period. RocksDB's compactions
// take the deleted bytes off the disk as they reach them.
import { keyPrefix, keyRange, type KeySpaceName } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { afterPart, indexedPartOf, internalIdOf, largestIdOf, receivedAtHex, ulidFloor } from './rocksdb-index.ts'

/** Deletes per write in the sweeps. */
const CHUNK = 5_000

/**
 * Deletes the events whose internal IDs were made before `before` (ms): the ID's time, which is the
 * receive time unless a client's ID seed set it. `sweepIds` also sweeps the dedup id index. `signal`
 * stops it between writes (a shutdown does not wait for a long sweep).
 */
export async function deleteEventsBefore(
  rocks: Rocks,
  before: number,
  { sweepIds = false, signal }: { sweepIds?: boolean; signal?: AbortSignal } = {},
): Promise<void> {
  const cutoff = ulidFloor(before)
  const ops: WriteOp[] = [{ type: 'delRange', start: keyRange('events').gte, end: keyPrefix('events', cutoff) }]
  for (const space of ['eventsByName', 'eventsByEnv', 'eventsByEnvName'] as const)
    for await (const part of indexedParts(rocks, space))
      ops.push({ type: 'delRange', start: keyPrefix(space, part), end: keyPrefix(space, part + cutoff) })
  await rocks.write(ops)
  // Off-clock entries are keyed by receive time: those received before `before` whose events went.
  const offClock = keyRange('eventsByReceivedAt')
  await deleteWhere(
    rocks,
    { gte: offClock.gte, lt: offClock.gte + receivedAtHex(before) },
    internalIdOf,
    cutoff,
    signal,
  )
  if (sweepIds) await deleteWhere(rocks, keyRange('eventsById'), largestIdOf, cutoff, signal)
}

/** Each indexed part of an index, one seek apiece. */
async function* indexedParts(rocks: Rocks, space: KeySpaceName): AsyncGenerator<string> {
  const { gte, lt } = keyRange(space)
  for (let from = gte; ; ) {
    let part: string | undefined
    for await (const { key } of rocks.scan({ gte: from, lt, limit: 1 })) part = indexedPartOf(gte, key)
    if (part === undefined) return
    yield part
    from = afterPart(gte, part)
  }
}

/** Deletes the keys of `range` whose ID (`idOf`) is below `cutoff`, a chunk per write. */
async function deleteWhere(
  rocks: Rocks,
  range: { gte: string; lt: string },
  idOf: (key: string) => string,
  cutoff: string,
  signal?: AbortSignal,
): Promise<void> {
  let ops: WriteOp[] = []
  for await (const { key } of rocks.scan(range)) {
    if (idOf(key) < cutoff) ops.push({ type: 'del', key })
    if (ops.length < CHUNK) continue
    await rocks.write(ops)
    ops = []
    if (signal?.aborted) return
  }
  await rocks.write(ops)
}
