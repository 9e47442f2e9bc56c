// ControlStore on a compacted, single-partition topic (distributed mode), materialised in memory
// on every node, so reads stay synchronous and ingest authenticates without a round trip.
//
// Open: read the topic from its beginning to its end (Bus.readPartition), then follow it with a
// consumer group of this store alone (a new group per instance, starting from the beginning;
// records at or below the offset already applied are skipped, so nothing between the read and the
// subscription is missed). One partition keeps every control write in one total order.
//
// Records: key `<kind>\0<id>`; value JSON `{"doc": …, "write": "<store>:<n>"}` for a put, and for a
// delete `{"deleted": true, "write": …}` followed by a tombstone (empty value) with which compaction
// drops the older versions. `write` lets put/delete resolve only once this node's own view applied
// it (read-your-writes): the tombstone alone could not say whose delete it was.
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Bus, BusRecord, ConsumedRecord } from '../bus/types.ts'
import { SluiceError } from '../core/errors.ts'
import { fingerprint } from '../core/fingerprint.ts'
import type { ControlDocs, ControlKind, ControlStore } from './types.ts'

export interface TopicControlOptions {
  /** How long a durable write may take to reach this node's view before put/delete reject. */
  applyTimeoutMs?: number
}

type Entry = { doc: unknown; write?: string } | { deleted: true; write?: string }

export async function createTopicControlStore(
  bus: Bus,
  topic: string,
  log: Logger,
  options: TopicControlOptions = {},
): Promise<ControlStore> {
  const applyTimeoutMs = options.applyTimeoutMs ?? 10_000
  const storeId = randomUUID()
  const docs = new Map<ControlKind, Map<string, unknown>>()
  const kindMap = (kind: ControlKind) => docs.get(kind) ?? docs.set(kind, new Map()).get(kind)!
  const waiting = new Map<string, { applied(): void; abandoned(err: Error): void }>()
  let applied = -1n
  let writes = 0

  function apply(records: ConsumedRecord[]): void {
    for (const record of records) {
      const offset = BigInt(record.offset)
      if (offset <= applied) continue
      applied = offset
      const separator = record.key.indexOf('\0')
      const kind = record.key.slice(0, separator) as ControlKind
      const id = record.key.slice(separator + 1)
      if (record.value.length === 0) {
        kindMap(kind).delete(id)
        continue
      }
      let entry: Entry
      try {
        entry = JSON.parse(record.value.toString('utf8')) as Entry
      } catch (err) {
        log.error(
          { err, topic, offset: record.offset, kind, id: fingerprint(id) },
          'control record is not JSON; skipped',
        )
        continue
      }
      if ('doc' in entry) kindMap(kind).set(id, entry.doc)
      else kindMap(kind).delete(id)
      if (entry.write) waiting.get(entry.write)?.applied()
    }
  }

  await bus.ensureTopics({ [topic]: { partitions: 1, compacted: true } })
  await bus.readPartition(topic, 0, async (records) => apply(records))
  const subscription = await bus.subscribe({
    group: `${topic}.view.${storeId}`,
    metricsGroup: `${topic}.view`, // one series per process, not one per process start
    topics: [topic],
    fromBeginning: true,
    handler: async (batch) => apply(batch.records),
  })

  /** Publishes, then waits until this node's view applied the write. */
  async function write(key: string, entry: Entry, tombstone: boolean): Promise<void> {
    const id = `${storeId}:${++writes}`
    let timer: NodeJS.Timeout | undefined
    const visible = new Promise<void>((resolve, reject) => {
      waiting.set(id, { applied: resolve, abandoned: reject })
    }).finally(() => {
      clearTimeout(timer)
      waiting.delete(id)
    })
    visible.catch(() => {}) // settled while the publish is still in flight (close): awaited below
    const records: BusRecord[] = [{ key, value: Buffer.from(JSON.stringify({ ...entry, write: id })) }]
    if (tombstone) records.push({ key, value: Buffer.alloc(0) })
    try {
      await bus.publish(topic, records)
    } catch (err) {
      waiting.get(id)?.abandoned(err as Error)
      await visible.catch(() => {})
      throw err
    }
    timer = setTimeout(
      () =>
        waiting
          .get(id)
          ?.abandoned(
            new SluiceError(
              'LOG_UNAVAILABLE',
              `the control write is durable but did not reach this node's view within ${applyTimeoutMs} ms`,
            ),
          ),
      applyTimeoutMs,
    )
    await visible
  }

  return {
    get: <K extends ControlKind>(kind: K, id: string) => kindMap(kind).get(id) as ControlDocs[K] | undefined,
    list: <K extends ControlKind>(kind: K) => [...kindMap(kind).values()] as Array<ControlDocs[K]>,
    put: (kind, id, doc) => write(`${kind}\0${id}`, { doc }, false),
    delete: (kind, id) => write(`${kind}\0${id}`, { deleted: true }, true),
    async close() {
      await subscription.stop()
      for (const pending of waiting.values())
        pending.abandoned(new SluiceError('LOG_UNAVAILABLE', 'the control store was closed'))
    },
  }
}
