// Acknowledgements durable to the disk (docs/operations.md, "Durability"): a RocksDB write returns
// once its bytes are in the write-ahead log's file, in the page cache, which a power cut loses. The
// binding writes with RocksDB's default WriteOptions (no `sync`: its write takes no options), so the
// WAL is synced here: one fdatasync per group of writes, every write that completed before a sync
// starts being covered by it (group commit, as the local log's writes are grouped).
// RocksDB moves to a new WAL file when a memtable fills; a write may have landed in a file it has
// since left, so every file it wrote to since the last sync is synced before the new one is taken.
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'

/** `always`: a write resolves once its WAL bytes are on stable storage; `off`: once in the WAL file. */
export type Durability = 'always' | 'off'

/** The live WAL, as rocksdb-native's `db.currentWalFile()` names it (`path` from the WAL dir). */
export interface WalFile {
  path: string
  number: number
}

export interface WalSync {
  /** Resolves once every write that completed before the call is on stable storage. */
  sync(): Promise<void>
  close(): Promise<void>
}

const WAL_NAME = /^(\d+)\.log$/

/** `mkdir -p` whose new directories' entries are synced, so that a power cut cannot take a data dir Sluice made. */
export async function makeDirDurable(path: string): Promise<void> {
  const first = await mkdir(path, { recursive: true })
  if (first === undefined) return
  // Each directory made holds the next one's entry; the first one's is in a directory that was there.
  for (let at = resolve(path); ; at = dirname(at)) {
    await syncPath(dirname(at))
    if (at === resolve(first)) return
  }
}

/** fsync of a file, or of a directory (its entries: a file created or renamed in it). */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r')
  await handle.sync().finally(() => handle.close())
}

/** `dir`: the WAL dir (the database's own: Sluice sets no wal_dir). */
export async function createWalSync(currentWalFile: () => Promise<WalFile>, dir: string): Promise<WalSync> {
  const dirHandle = await open(dir, 'r')
  let held = await openWal(await currentWalFile())
  // A new WAL's directory entry, so that the file a sync made durable is found after a power cut.
  await dirHandle.sync()
  // RocksDB creates the database's dir without syncing its parent: a power cut could lose the whole dir.
  const parent = await open(dirname(dir), 'r')
  await parent.sync().finally(() => parent.close())
  let running: Promise<void> | null = null
  let next: PromiseWithResolvers<void> | null = null

  async function openWal(wal: WalFile): Promise<{ number: number; file: FileHandle }> {
    return { number: wal.number, file: await open(join(dir, wal.path), 'r') }
  }

  async function syncOnce(): Promise<void> {
    // Both at once, one wait for the thread pool and not two (docs/operations.md, "Metrics on the
    // request path", has what a hand-off costs): the held file's sync, started after the call,
    // covers what the writes completed before it put there; while RocksDB has not moved on, that
    // is all of it.
    const [current] = await Promise.all([currentWalFile(), held.file.datasync()])
    if (current.number === held.number) return
    // Each file RocksDB left since the last sync took writes until it moved on: synced before let go.
    for (const name of await readdir(dir)) {
      const number = Number(WAL_NAME.exec(name)?.[1] ?? Number.NaN)
      if (number > held.number && number < current.number) await syncFile(join(dir, name))
    }
    const taken = await openWal(current).catch((err) => {
      // Left already, flushed and deleted since currentWalFile(): look again.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    })
    if (!taken) return syncOnce()
    await taken.file.datasync()
    await dirHandle.sync()
    await held.file.close()
    held = taken
  }

  function start(): Promise<void> {
    const done = syncOnce()
    running = done
    const settle = () => {
      running = null
      const waiting = next
      next = null
      if (waiting) start().then(waiting.resolve, waiting.reject)
    }
    done.then(settle, settle)
    return done
  }

  return {
    sync() {
      if (!running) return start()
      // The sync in progress may have started before the caller's write completed: the next one covers it.
      next ??= Promise.withResolvers<void>()
      return next.promise
    },
    async close() {
      while (running) await running.catch(() => {})
      await held.file.close()
      await dirHandle.close()
    },
  }
}

/** A WAL file RocksDB deleted is one whose writes a flush put in synced table files. */
async function syncFile(path: string): Promise<void> {
  let file: FileHandle
  try {
    file = await open(path, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  try {
    await file.datasync()
  } finally {
    await file.close()
  }
}
