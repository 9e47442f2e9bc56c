// One format version for everything a data dir's RocksDB holds (every space of core/keyspaces.ts):
// written when the database is created empty, checked at every open. A data dir of another format,
// or with data but no version (made before versions), is refused, never converted: Sluice carries
// no upgrade code, so what it reads is only what this build writes.
import { SluiceError } from './errors.ts'
import { keyPrefix } from './keyspaces.ts'

/** Raise it with any change to what a key space holds or how it is encoded. */
export const DATA_FORMAT = 1
const FORMAT_KEY = keyPrefix('dataFormat')

/** What the check needs of the database being opened (core/rocks.ts, before it is handed out). */
export interface FormatStore {
  get(key: string): Promise<Buffer | null>
  put(key: string, value: string): Promise<void>
  /** True when no column family holds a key. */
  isEmpty(): Promise<boolean>
}

/** 'created': an empty database, now stamped with DATA_FORMAT. Throws CONFIG_INVALID for another format. */
export async function checkDataFormat(path: string, db: FormatStore): Promise<'created' | 'opened'> {
  const found = (await db.get(FORMAT_KEY))?.toString()
  if (found === String(DATA_FORMAT)) return 'opened'
  if (found !== undefined || !(await db.isEmpty())) throw formatRefused(path, found)
  await db.put(FORMAT_KEY, String(DATA_FORMAT))
  return 'created'
}

function formatRefused(path: string, found: string | undefined): SluiceError {
  const held = found === undefined ? 'none (it was made before data dirs had one)' : found
  return new SluiceError(
    'CONFIG_INVALID',
    `dataDir (--data-dir / SLUICE_DATA_DIR): ${path} holds data format ${held}; this build reads data format ` +
      `${DATA_FORMAT} only. Start with an empty data dir (move this one away or delete it): the events, keys ` +
      'and webhooks of an embedded (sluice dev) data dir are not carried over; a distributed role restores ' +
      'all it keeps there from the Kafka changelogs, so deleting its data dir is safe.',
  )
}
