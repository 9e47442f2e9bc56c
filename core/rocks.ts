// A typed, minimal face of rocksdb-native (chosen over the discontinued level-rocksdb:
// prebuilt for Node 24 and has range deletes, which dedup expiry and log retention need).
// One RocksDB per data dir; every adapter owns a key prefix, so a write batch is atomic
// across them and there is a single WAL to recover.
import RocksDB from 'rocksdb-native'
import { SluiceError } from './errors.ts'
import { gauge } from './metrics.ts'

export type WriteOp =
  | { type: 'put'; key: string; value: Buffer | string }
  | { type: 'del'; key: string }
  | { type: 'delRange'; start: string; end: string }

export interface ScanRange {
  gte?: string
  gt?: string
  lt?: string
  lte?: string
  reverse?: boolean
  limit?: number
  /** Entries read from RocksDB at a time (default: `limit`, else 256): fewer where each is large. */
  batch?: number
}

export interface Rocks {
  get(key: string): Promise<Buffer | null>
  getMany(keys: string[]): Promise<Array<Buffer | null>>
  /** Atomic; resolves once the batch is in the write-ahead log. */
  write(ops: WriteOp[]): Promise<void>
  scan(range: ScanRange): AsyncIterable<{ key: string; value: Buffer }>
  close(): Promise<void>
}

const open = new Set<NativeDb>()
/** Sums of RocksDB properties over the process's databases, read at each scrape. */
const sumOf = async (property: string) => {
  let sum = 0
  for (const db of open) sum += Number(await db.getProperty(property).catch(() => 0))
  return sum
}
/** A gauge whose `kind` label is each of `properties`' keys, valued by the RocksDB property it names. */
function propertiesGauge(name: string, help: string, properties: Record<string, string>): void {
  gauge<'kind'>({
    name,
    help,
    labelNames: ['kind'],
    async collect() {
      this.reset() // no series in a process without RocksDB
      if (open.size > 0)
        for (const [kind, property] of Object.entries(properties)) this.set({ kind }, await sumOf(property))
    },
  })
}
propertiesGauge(
  'sluice_rocksdb_memory_bytes',
  "RocksDB's memory by kind: memtables (at most SLUICE_ROCKSDB_WRITE_BUFFERS × SLUICE_ROCKSDB_WRITE_BUFFER_MB), block cache, table readers",
  {
    memtables: 'rocksdb.size-all-mem-tables',
    block_cache: 'rocksdb.block-cache-usage',
    table_readers: 'rocksdb.estimate-table-readers-mem',
  },
)
// RocksDB's background work: what runs now, and how far compaction is behind (RocksDB slows writes
// down when that grows).
propertiesGauge('sluice_rocksdb_jobs_running', "RocksDB's flushes and compactions running now, by kind", {
  flush: 'rocksdb.num-running-flushes',
  compaction: 'rocksdb.num-running-compactions',
})
gauge({
  name: 'sluice_rocksdb_pending_compaction_bytes',
  help: "RocksDB's estimate of the bytes compaction must rewrite to bring every level within its target size",
  async collect() {
    this.reset()
    if (open.size > 0) this.set(await sumOf('rocksdb.estimate-pending-compaction-bytes'))
  },
})

interface NativeBatch {
  get(key: string): Promise<Buffer | null>
  tryPut(key: string, value: Buffer | string): void
  tryDelete(key: string): void
  tryDeleteRange(start: string, end: string): void
  flush(): Promise<void>
  tryFlush(): void
}
interface NativeDb {
  ready(): Promise<void>
  read(opts?: { capacity?: number; autoDestroy?: boolean }): NativeBatch
  write(opts?: { capacity?: number; autoDestroy?: boolean }): NativeBatch
  iterator(range: ScanRange & { capacity?: number }): AsyncIterable<{ key: Buffer; value: Buffer }>
  getProperty(name: string): Promise<string | number>
  close(): Promise<void>
}

/**
 * Memory RocksDB may hold for writes: `writeBuffers` memtables of `writeBufferMb` (rocksdb-native's
 * defaults, 2 × 64 MiB, were half the embedded server's peak RSS). Its block cache is the binding's
 * fixed 32 MiB LRU (rocksdb-native has no option for its size); one DB per process shares it.
 */
export interface RocksMemory {
  writeBufferMb: number
  writeBuffers: number
}

export async function openRocks(
  path: string,
  memory: RocksMemory = { writeBufferMb: 16, writeBuffers: 2 },
): Promise<Rocks> {
  const Native = RocksDB as unknown as new (path: string, opts?: object) => NativeDb
  const { pinningTier } = (RocksDB as unknown as { constants: { pinningTier: Record<'NONE', number> } }).constants
  const db = new Native(path, {
    writeBufferSize: memory.writeBufferMb * 1024 * 1024,
    maxWriteBufferNumber: memory.writeBuffers,
    // Index and filter blocks live in the block cache and may be evicted like data blocks. The
    // binding pins them all by default, so the cache outgrew its 32 MiB with every file written
    // (the event store keeps growing): 48 MiB after 7 minutes of the soak, and rising.
    topLevelIndexPinningTier: pinningTier.NONE,
    partitionPinningTier: pinningTier.NONE,
    unpartitionedPinningTier: pinningTier.NONE,
  })
  try {
    await db.ready()
  } catch (err) {
    // RocksDB's own words ("While lock file: …/LOCK: Resource temporarily unavailable") do not say what to do.
    if (/LOCK/.test((err as Error).message))
      throw new SluiceError(
        'CONFIG_INVALID',
        `dataDir (--data-dir / SLUICE_DATA_DIR): ${path} is in use by another Sluice process`,
        { cause: err },
      )
    throw err
  }
  open.add(db)
  return {
    get(key) {
      const batch = db.read({ capacity: 1, autoDestroy: true })
      const value = batch.get(key)
      batch.tryFlush()
      return value
    },
    getMany(keys) {
      if (keys.length === 0) return Promise.resolve([])
      const batch = db.read({ capacity: keys.length, autoDestroy: true })
      const values = keys.map((key) => batch.get(key))
      batch.tryFlush()
      return Promise.all(values)
    },
    async write(ops) {
      if (ops.length === 0) return
      const batch = db.write({ capacity: ops.length, autoDestroy: true })
      for (const op of ops) {
        if (op.type === 'put') batch.tryPut(op.key, op.value)
        else if (op.type === 'del') batch.tryDelete(op.key)
        else batch.tryDeleteRange(op.start, op.end)
      }
      await batch.flush()
    },
    async *scan(range) {
      const { batch, ...bounds } = range
      const capacity = Math.min(batch ?? range.limit ?? 256, 1024)
      for await (const { key, value } of db.iterator({ ...bounds, capacity }))
        yield { key: key.toString('utf8'), value }
    },
    close: () => {
      open.delete(db)
      return db.close()
    },
  }
}
