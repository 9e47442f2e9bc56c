// One format version for everything a data dir's RocksDB holds (every space of core/keyspaces.ts):
// written when the database is created empty, checked at every open. A data dir of another format,
// or with data but no version (made before versions), is refused, never converted: Sluice carries
// no upgrade code, so what it reads is only what this build writes, and the formats that are part
// of it (EXTENDED): such a data dir is opened and stamped with this format, so a build before it
// refuses it from then on.
import { SluiceError } from './errors.ts'
import { keyPrefix } from './keyspaces.ts'

/** Raise it with any change to what a key space holds or how it is encoded. */
export const DATA_FORMAT = 3
/**
 * Formats whose every key this build reads as they are. 1: format 2 keeps the events of a write that
 * share a millisecond in one value of E (store/rocksdb-events.ts); E's one-event keys, all format 1
 * has, read as before. 2: format 3 states once, in a value's first line, the fields its events
 * share; a value without that line, as format 2 wrote them all, reads as before.
 */
const EXTENDED = ['1', '2']
/** As errors name them: "1, 2 or 3". */
export const READABLE_FORMATS = `${EXTENDED.join(', ')} or ${DATA_FORMAT}`
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
  if (found !== undefined && EXTENDED.includes(found)) {
    await db.put(FORMAT_KEY, String(DATA_FORMAT))
    return 'opened'
  }
  if (found !== undefined || !(await db.isEmpty())) throw formatRefused(path, found)
  await db.put(FORMAT_KEY, String(DATA_FORMAT))
  return 'created'
}

function formatRefused(path: string, found: string | undefined): SluiceError {
  const held = found === undefined ? 'none (it was made before data dirs had one)' : found
  return new SluiceError(
    'CONFIG_INVALID',
    `dataDir (--data-dir / SLUICE_DATA_DIR): ${path} holds data format ${held}; this build reads data format ` +
      `${READABLE_FORMATS} only. Start with an empty data dir (move this one away or delete it): the events, keys ` +
      'and webhooks of an embedded (sluice dev) data dir are not carried over; a distributed role restores ' +
      'all it keeps there from the Kafka changelogs, so deleting its data dir is safe.',
  )
}
