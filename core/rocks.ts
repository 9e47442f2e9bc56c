// A typed, minimal face of rocksdb-native (chosen over the discontinued level-rocksdb:
// prebuilt for Node 24 and has range deletes, which dedup expiry and log retention need).
// One RocksDB per data dir; every adapter owns a key prefix, so a write batch is atomic
// across them and there is a single WAL to recover.
import RocksDB from 'rocksdb-native'
import { SluiceError } from './errors.ts'

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
}

export interface Rocks {
  get(key: string): Promise<Buffer | null>
  getMany(keys: string[]): Promise<Array<Buffer | null>>
  /** Atomic; resolves once the batch is in the write-ahead log. */
  write(ops: WriteOp[]): Promise<void>
  scan(range: ScanRange): AsyncIterable<{ key: string; value: Buffer }>
  close(): Promise<void>
}

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
  close(): Promise<void>
}

export async function openRocks(path: string): Promise<Rocks> {
  const Native = RocksDB as unknown as new (path: string, opts?: object) => NativeDb
  const db = new Native(path)
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
      const capacity = Math.min(range.limit ?? 256, 1024)
      for await (const { key, value } of db.iterator({ ...range, capacity })) yield { key: key.toString('utf8'), value }
    },
    close: () => db.close(),
  }
}
