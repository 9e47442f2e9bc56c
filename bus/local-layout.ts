// The local log's keys in RocksDB (bus/local.ts): `L<topic>\0<partition>\0<first offset hex16>` record
// batches, `O<group>\0<topic>\0<partition>` next offset, `T<topic>` topic spec; and what reads or
// deletes them as a whole: a partition's end, retention.
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'

export const logKey = (topic: string, partition: number, offset: number) =>
  keyPrefix('logBatches', `${topic}\0${partition}\0${offset.toString(16).padStart(16, '0')}`)
export const offsetOf = (key: string) => parseInt(key.slice(key.lastIndexOf('\0') + 1), 16)
export const offsetKey = (group: string, topic: string, partition: number) =>
  keyPrefix('logOffsets', `${group}\0${topic}\0${partition}`)
/** [group, topic, partition] of an offset key. */
export const offsetKeyParts = (key: string) => key.slice(keyPrefix('logOffsets').length).split('\0')

/** The offset of a partition's last stored record, -1 when none is stored. */
export async function lastOffset(rocks: Rocks, topic: string, partition: number): Promise<number> {
  for await (const { key, value } of rocks.scan({
    gte: logKey(topic, partition, 0),
    lte: logKey(topic, partition, Number.MAX_SAFE_INTEGER),
    reverse: true,
    limit: 1,
  })) {
    return offsetOf(key) + value.readUInt32BE(0) - 1
  }
  return -1
}

/** Every group's committed offset as RocksDB holds it: offsetKey → next offset. */
export async function storedOffsets(rocks: Rocks): Promise<Map<string, number>> {
  const offsets = new Map<string, number>()
  for await (const { key, value } of rocks.scan(keyRange('logOffsets'))) offsets.set(key, Number(value.toString()))
  return offsets
}

/**
 * Deletes, per partition (`topic\0partition`), the record batches below `upTo`. `truncated` holds,
 * per partition, the offset below which the log is already deleted: each call deletes only what is
 * new, and writes nothing when nothing is.
 */
export async function deleteConsumed(
  rocks: Rocks,
  upTo: ReadonlyMap<string, number>,
  truncated: Map<string, number>,
): Promise<void> {
  const ops: WriteOp[] = []
  for (const [tp, end] of upTo) {
    const [topic, partition] = tp.split('\0')
    const from = truncated.get(tp) ?? 0
    if (end > from)
      ops.push({
        type: 'delRange',
        start: logKey(topic, Number(partition), from),
        end: logKey(topic, Number(partition), end),
      })
  }
  await rocks.write(ops)
  for (const [tp, end] of upTo) if (end > (truncated.get(tp) ?? 0)) truncated.set(tp, end)
}
