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
//
// Compare-and-set (putIf): a record keyed `cas\0<write>`, value `{"kind", "id", "doc", "revision",
// "write"}`, where `revision` is one more than the revision the writer's view held. Every node applies
// the topic in one order and takes the record only if its revision is above the document's, so all
// agree on which of two concurrent writes won; the loser is told false. A key of its own per record,
// because compaction keeps a key's last record, which could be the loser's: the winner tombstones the
// record it superseded, the loser its own, and a delete those of its document.
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
interface CasEntry {
  kind: ControlKind
  id: string
  doc: unknown
  revision: number
  write: string
}
const CAS_PREFIX = 'cas\0'

interface Waiter {
  /** `superseded`: the compare-and-set record this write replaced, to tombstone. */
  applied(accepted: boolean, superseded?: string): void
  abandoned(err: Error): void
}

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
  const waiting = new Map<string, Waiter>()
  // By `<kind>\0<id>`: the revision of the last compare-and-set taken, and the record that holds it.
  const revisions = new Map<string, number>()
  const casRecords = new Map<string, string>()
  let applied = -1n
  let writes = 0

  function apply(records: ConsumedRecord[]): void {
    for (const record of records) {
      const offset = BigInt(record.offset)
      if (offset <= applied) continue
      applied = offset
      if (record.key.startsWith(CAS_PREFIX)) {
        if (record.value.length > 0) applyCas(record)
        continue
      }
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
      else {
        kindMap(kind).delete(id)
        revisions.delete(record.key)
        casRecords.delete(record.key)
      }
      if (entry.write) waiting.get(entry.write)?.applied(true)
    }
  }

  function applyCas(record: ConsumedRecord): void {
    let entry: CasEntry
    try {
      entry = JSON.parse(record.value.toString('utf8')) as CasEntry
    } catch (err) {
      log.error({ err, topic, offset: record.offset }, 'control record is not JSON; skipped')
      return
    }
    const docKey = `${entry.kind}\0${entry.id}`
    const accepted = entry.revision > (revisions.get(docKey) ?? 0)
    const superseded = accepted ? casRecords.get(docKey) : undefined
    if (accepted) {
      kindMap(entry.kind).set(entry.id, entry.doc)
      revisions.set(docKey, entry.revision)
      casRecords.set(docKey, record.key)
    }
    waiting.get(entry.write)?.applied(accepted, superseded)
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

  /** Publishes, then waits until this node's view applied the write: whether it was taken, and what it replaced. */
  async function write(records: (id: string) => BusRecord[]): Promise<{ accepted: boolean; superseded?: string }> {
    const id = `${storeId}:${++writes}`
    let timer: NodeJS.Timeout | undefined
    const visible = new Promise<{ accepted: boolean; superseded?: string }>((resolve, reject) => {
      waiting.set(id, { applied: (accepted, superseded) => resolve({ accepted, superseded }), abandoned: reject })
    }).finally(() => {
      clearTimeout(timer)
      waiting.delete(id)
    })
    visible.catch(() => {}) // settled while the publish is still in flight (close): awaited below
    try {
      await bus.publish(topic, records(id))
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
    return visible
  }

  const json = (value: unknown) => Buffer.from(JSON.stringify(value))
  const tombstone = (key: string): BusRecord => ({ key, value: Buffer.alloc(0) })

  /** Tombstones of compare-and-set records no longer needed; best effort, as they change no view. */
  async function dropRecords(keys: Array<string | undefined>): Promise<void> {
    const records = keys.filter((key) => key !== undefined).map(tombstone)
    if (records.length === 0) return
    await bus.publish(topic, records).catch((err) => log.warn({ err, topic }, 'control tombstone not written'))
  }

  return {
    get: <K extends ControlKind>(kind: K, id: string) => kindMap(kind).get(id) as ControlDocs[K] | undefined,
    list: <K extends ControlKind>(kind: K) => [...kindMap(kind).values()] as Array<ControlDocs[K]>,
    async put(kind, id, doc) {
      const key = `${kind}\0${id}`
      await write((write) => [{ key, value: json({ doc, write }) }])
    },
    async putIf(kind, id, doc, expected) {
      const docKey = `${kind}\0${id}`
      if (kindMap(kind).get(id) !== expected) return false
      const revision = (revisions.get(docKey) ?? 0) + 1
      const key = `${CAS_PREFIX}${storeId}:${++writes}`
      const { accepted, superseded } = await write((write) => [
        { key, value: json({ kind, id, doc, revision, write } satisfies CasEntry) },
      ])
      await dropRecords(accepted ? [superseded] : [key])
      return accepted
    },
    async delete(kind, id) {
      const key = `${kind}\0${id}`
      const casRecord = casRecords.get(key)
      await write((write) => [{ key, value: json({ deleted: true, write }) }, tombstone(key)])
      await dropRecords([casRecord])
    },
    async close() {
      await subscription.stop()
      for (const pending of waiting.values())
        pending.abandoned(new SluiceError('LOG_UNAVAILABLE', 'the control store was closed'))
    },
  }
}
