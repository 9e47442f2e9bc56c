// Backups of an embedded data dir (docs/operations.md, "Backups and upgrades"). A backup is a
// directory: `db/`, a RocksDB holding one point in time of every column family of the running
// server's (core/rocks.ts backupRocks), and `backup.json` saying what it is. It is made beside its
// destination and renamed into place when complete, so a backup that exists is a whole one.
// `restore` copies one into a stopped server's empty data dir and opens it once, as a start would.
import { existsSync } from 'node:fs'
import { cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import { DATA_FORMAT } from '../core/data-format.ts'
import { backupRocks, openRocks, type RocksOptions, type Rocks } from '../core/rocks.ts'
import { packageVersion } from '../core/version.ts'
import { syncPath } from '../core/wal-sync.ts'
import type { MakeBackup } from '../api/backups.ts'

const MANIFEST = 'backup.json'

interface Manifest {
  sluice: string
  data_format: number
  created_at: string
  keys: number
  bytes: number
}

/** The embedded server's POST /v1/backups: one at a time. */
export function backupMaker(rocks: Rocks, dataDir: string, settings: RocksOptions): MakeBackup {
  let running = false
  return async (to) => {
    await checkDestination(to, dataDir)
    if (running) throw new SluiceError('CONFLICT', 'a backup is being made; wait for it to end')
    running = true
    const partial = `${to}.partial-${newUlid()}`
    try {
      const started = Date.now()
      // Only the server's user reads it: it holds what the data dir holds (keys, users' hashes, raw bodies).
      await mkdir(partial, { mode: 0o700 })
      const counts = await backupRocks(rocks, join(partial, 'db'), settings)
      const manifest: Manifest = {
        sluice: packageVersion(),
        data_format: DATA_FORMAT,
        created_at: new Date(started).toISOString(),
        ...counts,
      }
      await writeFile(join(partial, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
      await syncPath(join(partial, MANIFEST))
      await syncPath(partial)
      await rename(partial, to)
      await syncPath(dirname(to))
      return { path: to, dataFormat: DATA_FORMAT, ...counts, createdAt: started, durationMs: Date.now() - started }
    } catch (err) {
      await rm(partial, { recursive: true, force: true })
      throw err
    } finally {
      running = false
    }
  }
}

async function checkDestination(to: string, dataDir: string): Promise<void> {
  if (!isAbsolute(to))
    throw new SluiceError('REQUEST_INVALID', "body.to: must be an absolute path on the server's disk")
  if (existsSync(to)) throw new SluiceError('CONFLICT', `body.to: ${to} exists; name a directory that does not`)
  const parent = await stat(dirname(to)).catch(() => undefined)
  if (!parent?.isDirectory())
    throw new SluiceError('REQUEST_INVALID', `body.to: ${dirname(to)} is not a directory on the server`)
  const inside = relative(resolve(dataDir), resolve(to))
  if (!inside.startsWith('..') && !isAbsolute(inside))
    throw new SluiceError('REQUEST_INVALID', 'body.to: must be outside the data dir')
}

export class RestoreError extends Error {}

/**
 * `sluice restore --from DIR --data-dir D`: D must hold no database (a stopped server's data dir moved
 * away, or a new one). The copy is opened once with the data format checks of a start.
 */
export async function restoreBackup(from: string, dataDir: string, settings: RocksOptions): Promise<Manifest> {
  const manifest = await readFile(join(from, MANIFEST), 'utf8').then(
    (text) => JSON.parse(text) as Manifest,
    () => {
      throw new RestoreError(`--from: ${from} is not a Sluice backup (no ${MANIFEST})`)
    },
  )
  const target = join(dataDir, 'db')
  if (existsSync(target))
    throw new RestoreError(`--data-dir: ${dataDir} already holds a database; restore into a new or emptied data dir`)
  await mkdir(dataDir, { recursive: true })
  const partial = `${target}.partial-${newUlid()}`
  try {
    await cp(join(from, 'db'), partial, { recursive: true, errorOnExist: true })
    // Opening checks the data format (core/data-format.ts) and replays the copy's log, as a start would.
    const rocks: Rocks = await openRocks(partial, settings)
    await rocks.close()
    await rename(partial, target)
    await syncPath(dataDir)
  } catch (err) {
    await rm(partial, { recursive: true, force: true })
    throw err
  }
  return manifest
}
