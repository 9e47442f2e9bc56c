// A typed, minimal face of rocksdb-native (chosen over the discontinued level-rocksdb:
// prebuilt for Node 24 and has range deletes, which dedup expiry and log retention need).
// One RocksDB per data dir; every adapter owns a key prefix, so a write batch is atomic
// across them and there is a single WAL to recover. The spaces core/keyspaces.ts gives a column
// family are kept in it; a key's first character picks it, and a batch stays atomic across them.
// An open refuses a data dir of another data format (core/data-format.ts).
import RocksDB from 'rocksdb-native'
import { SluiceError } from './errors.ts'
import type { Logger } from 'pino'
import { FAMILIES, KEY_SPACES, type FamilyName, type KeySpace } from './keyspaces.ts'
import { DATA_FORMAT, checkDataFormat } from './data-format.ts'
import { gauge } from './metrics.ts'
import { createWalSync, type Durability, type WalFile, type WalSync } from './wal-sync.ts'

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
  /** Atomic; resolves once the batch is in the write-ahead log, on stable storage with durability `always`. */
  write(ops: WriteOp[]): Promise<void>
  scan(range: ScanRange): AsyncIterable<{ key: string; value: Buffer }>
  close(): Promise<void>
}

/** The column families of each open database, by name (`default` first). */
const open = new Set<Map<string, NativeDb>>()
/** The same, by the Rocks that openRocks handed out: what backupRocks reads. */
const familiesOf = new WeakMap<Rocks, Map<string, NativeDb>>()
/**
 * Sums of a RocksDB property over the process's databases, read at each scrape: per column family
 * where RocksDB keeps the property per family (memtables, table readers, pending compaction, and
 * the block cache: the binding gives each family an LRU of its own), else over each database.
 */
const sumOf = async (property: string, family?: string) => {
  let sum = 0
  for (const families of open) {
    const db = families.get(family ?? 'default')
    // A family without a block cache has no value for its usage (NaN): nothing is held.
    const value = db ? Number(await db.getProperty(property).catch(() => 0)) : 0
    if (Number.isFinite(value)) sum += value
  }
  return sum
}
const FAMILY_NAMES = ['default', ...Object.keys(FAMILIES)]
gauge<'kind' | 'family'>({
  name: 'sluice_rocksdb_memory_bytes',
  help: "RocksDB's memory by kind and column family: memtables (docs/configuration.md, SLUICE_ROCKSDB_WRITE_BUFFER_MB), block caches, table readers",
  labelNames: ['kind', 'family'],
  async collect() {
    this.reset() // no series in a process without RocksDB
    if (open.size === 0) return
    for (const [kind, property] of Object.entries({
      memtables: 'rocksdb.size-all-mem-tables',
      block_cache: 'rocksdb.block-cache-usage',
      table_readers: 'rocksdb.estimate-table-readers-mem',
    }))
      for (const family of FAMILY_NAMES) this.set({ kind, family }, await sumOf(property, family))
  },
})
// RocksDB's background work: what runs now, and how far compaction is behind (RocksDB slows writes
// down when that grows).
gauge<'kind'>({
  name: 'sluice_rocksdb_jobs_running',
  help: "RocksDB's flushes and compactions running now, by kind",
  labelNames: ['kind'],
  async collect() {
    this.reset()
    if (open.size === 0) return
    // Counted for the whole database.
    this.set({ kind: 'flush' }, await sumOf('rocksdb.num-running-flushes'))
    this.set({ kind: 'compaction' }, await sumOf('rocksdb.num-running-compactions'))
  },
})
gauge({
  name: 'sluice_rocksdb_pending_compaction_bytes',
  help: "RocksDB's estimate of the bytes compaction must rewrite to bring every level within its target size",
  async collect() {
    this.reset()
    if (open.size === 0) return
    let sum = 0
    for (const family of FAMILY_NAMES) sum += await sumOf('rocksdb.estimate-pending-compaction-bytes', family)
    this.set(sum)
  },
})

interface NativeBatch {
  get(key: string): Promise<Buffer | null>
  tryPut(key: string | Buffer, value: Buffer | string): void
  tryDelete(key: string | Buffer): void
  tryDeleteRange(start: string, end: string): void
  flush(): Promise<void>
  tryFlush(): void
}
interface NativeDb {
  /** A session on column family `family`, created at open when missing. */
  columnFamily(family: object): NativeDb
  readonly defaultColumnFamily: { _handle: unknown }
  ready(): Promise<void>
  read(opts?: { capacity?: number; autoDestroy?: boolean }): NativeBatch
  write(opts?: { capacity?: number; autoDestroy?: boolean }): NativeBatch
  iterator(range: ScanRange & { capacity?: number }): AsyncIterable<{ key: Buffer; value: Buffer }>
  getProperty(name: string): Promise<string | number>
  currentWalFile(): Promise<WalFile>
  /** A session reading one point in time of every column family (its columnFamily sessions share it). */
  snapshot(): NativeDb
  close(): Promise<void>
}

/**
 * RocksDB's memory bounds (docs/operations.md, "Memory and backpressure"): `writeBuffers` memtables
 * per column family of `writeBufferMb` times the family's share (core/keyspaces.ts), and at most
 * `maxOpenFiles` files open, each holding a descriptor and a table reader. Required: the config
 * (config/config.ts) holds the one default.
 */
export interface RocksMemory {
  writeBufferMb: number
  writeBuffers: number
  maxOpenFiles: number
}

/** With what a write resolves (core/wal-sync.ts). Required: the config (config/config.ts) holds the one default. */
export interface RocksOptions extends RocksMemory {
  durability: Durability
}

type FamilyOptions = { writeBufferShare: number; bloomFilter: boolean; blockCache: boolean }

/** Refuses a data dir of another data format (core/data-format.ts), and one in use by another process. */
export async function openRocks(path: string, settings: RocksOptions, log?: Pick<Logger, 'info'>): Promise<Rocks> {
  const Native = RocksDB as unknown as new (path: string, opts?: object) => NativeDb
  const { constants, ColumnFamily } = RocksDB as unknown as {
    constants: { pinningTier: Record<'NONE', number> }
    ColumnFamily: new (name: string, opts: object) => object
  }
  const options = ({ writeBufferShare, bloomFilter, blockCache }: FamilyOptions) => ({
    writeBufferSize: Math.max(1, Math.round(settings.writeBufferMb * writeBufferShare)) * 1024 * 1024,
    // Without a filter, an open file's table reader holds its index block, bounded by maxOpenFiles;
    // in the block cache every new file's index would go in, read or not.
    ...(!bloomFilter && { filterPolicy: null, tableBlockSize: 64 * 1024, tableCacheIndexAndFilterBlocks: false }),
    ...(!blockCache && { blockCache: false, tableCacheIndexAndFilterBlocks: false }),
    maxWriteBufferNumber: settings.writeBuffers,
    // The binding pins index and filter blocks in the cache, which then grows past its size with every file.
    topLevelIndexPinningTier: constants.pinningTier.NONE,
    partitionPinningTier: constants.pinningTier.NONE,
    unpartitionedPinningTier: constants.pinningTier.NONE,
  })
  const db = new Native(path, {
    ...options({ writeBufferShare: 1, bloomFilter: true, blockCache: true }),
    maxOpenFiles: settings.maxOpenFiles,
  })
  const families = new Map<FamilyName, NativeDb>()
  for (const [name, family] of Object.entries(FAMILIES) as Array<[FamilyName, FamilyOptions]>)
    families.set(name, db.columnFamily(new ColumnFamily(name, options(family))))
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
  let walSync: WalSync | null = null
  /** By a key's first character (a family's space has a one-letter prefix); else the default family. */
  const byFirst: Array<NativeDb | undefined> = []
  for (const { prefix, family } of Object.values(KEY_SPACES) as KeySpace[])
    if (family !== undefined) byFirst[prefix.charCodeAt(0)] = families.get(family)
  /** The column family (a session of the binding) holding `key`. */
  const at = (key: string) => byFirst[key.charCodeAt(0)] ?? db
  const all = new Map<string, NativeDb>([['default', db], ...families])
  const close = async () => {
    open.delete(all)
    await walSync?.close()
    for (const family of families.values()) await family.close()
    await db.close()
  }
  const rocks: Rocks = {
    get(key) {
      const batch = at(key).read({ capacity: 1, autoDestroy: true })
      const value = batch.get(key)
      batch.tryFlush()
      return value
    },
    getMany(keys) {
      if (keys.length === 0) return Promise.resolve([])
      const batch = db.read({ capacity: keys.length, autoDestroy: true })
      const values = keys.map((key) => {
        const value = batch.get(key)
        inFamily(batch, at(key))
        return value
      })
      batch.tryFlush()
      return Promise.all(values)
    },
    // Not async: an async function's frame would hold `ops`, and with it every value's string, until
    // the WAL sync ends. The batch holds its own copies only until RocksDB has applied it.
    write(ops) {
      if (ops.length === 0) return Promise.resolve()
      let applied: Promise<void>
      try {
        const batch = db.write({ capacity: ops.length, autoDestroy: true })
        for (const op of ops) {
          if (op.type === 'put') batch.tryPut(op.key, op.value)
          else if (op.type === 'del') batch.tryDelete(op.key)
          else batch.tryDeleteRange(op.start, op.end)
          inFamily(batch, at(op.type === 'delRange' ? op.start : op.key))
        }
        applied = batch.flush()
      } catch (err) {
        return Promise.reject(err)
      }
      const sync = walSync
      return sync ? applied.then(() => sync.sync()) : applied
    },
    async *scan(range) {
      const { batch, ...bounds } = range
      const capacity = Math.min(batch ?? range.limit ?? 256, 1024)
      const family = at(bounds.gte ?? bounds.gt ?? bounds.lte ?? bounds.lt ?? '')
      for await (const { key, value } of family.iterator({ ...bounds, capacity }))
        yield { key: key.toString('utf8'), value }
    },
    close,
  }
  try {
    if (settings.durability === 'always') walSync = await createWalSync(() => db.currentWalFile(), path)
    const format = await checkDataFormat(path, {
      get: (key) => rocks.get(key),
      put: (key, value) => rocks.write([{ type: 'put', key, value }]),
      isEmpty: () => isEmpty(all.values()),
    })
    if (format === 'created') log?.info({ path, dataFormat: DATA_FORMAT }, 'new data dir')
  } catch (err) {
    await close()
    throw err
  }
  open.add(all)
  familiesOf.set(rocks, all)
  return rocks
}

export interface BackupCounts {
  keys: number
  bytes: number
}

/**
 * Copies one point in time of every column family of `rocks` (a snapshot: writes go on meanwhile)
 * into a new database at `to`, which must not exist. The copy opens with openRocks like any data dir.
 */
export async function backupRocks(rocks: Rocks, to: string, settings: RocksOptions): Promise<BackupCounts> {
  const families = familiesOf.get(rocks)
  if (!families) throw new Error('backupRocks: not a database openRocks opened')
  const snapshot = families.get('default')!.snapshot()
  const counts: BackupCounts = { keys: 0, bytes: 0 }
  const target = await openRocks(to, settings)
  try {
    for (const family of families.values()) {
      const view = family === families.get('default') ? snapshot : snapshot.columnFamily(family.defaultColumnFamily)
      let ops: WriteOp[] = []
      let size = 0
      for await (const { key, value } of view.iterator({ capacity: 256 })) {
        const text = key.toString('utf8')
        // Every key Sluice writes is a string; a key that is not UTF-8 would not survive the copy.
        if (Buffer.byteLength(text) !== key.length) throw new Error('backupRocks: a key is not UTF-8')
        ops.push({ type: 'put', key: text, value })
        size += key.length + value.length
        counts.keys++
        if (ops.length >= 1024 || size >= 4 * 1024 * 1024) {
          await target.write(ops)
          counts.bytes += size
          ops = []
          size = 0
        }
      }
      await target.write(ops)
      counts.bytes += size
      if (view !== snapshot) await view.close()
    }
  } finally {
    await snapshot.close()
    await target.close()
  }
  return counts
}

async function isEmpty(families: Iterable<NativeDb>): Promise<boolean> {
  for (const family of families) for await (const _ of family.iterator({ limit: 1, capacity: 1 })) return false
  return true
}

/**
 * Puts the batch's last operation in `family`. The binding writes each operation of a batch to the
 * column family the operation names, in one atomic write, but its batch API names the family of the
 * session that made the batch; so a batch that spans families (a stage's output and its consumer
 * offsets) is made on the default family and each operation is moved here. Reads likewise.
 * tests/core/rocks-families.test.ts reads each family with the binding itself, so an update of the
 * binding that changed this fails there.
 */
function inFamily(batch: NativeBatch, family: NativeDb): void {
  const ops = (batch as unknown as { _operations: Array<{ columnFamily: unknown }> })._operations
  ops[ops.length - 1].columnFamily = family.defaultColumnFamily._handle
}
