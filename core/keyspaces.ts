// Every key space of the one RocksDB a data dir holds, declared once. A key starts with its
// space's prefix; scans and range deletes take their bounds from `keyRange`, never from a
// neighbouring letter, so a new space cannot silently fall inside another's scan or range
// delete. tests/core/keyspaces.test.ts fails when two prefixes overlap (one starts the other)
// or when code writes a bound of its own. Changing what a space holds, or its prefix, raises
// DATA_FORMAT (core/data-format.ts): data dirs of another format are refused, not converted.

export interface KeySpace {
  prefix: string
  /** The file that writes and reads the space. */
  owner: string
  holds: string
  /** Read by range (iterator), not only by point reads. */
  scanned: boolean
  /** Cleared by range deletes (expiry, retention, partition reassignment). */
  rangeDeleted: boolean
  /** The RocksDB column family holding the space, when not the default one. */
  family?: FamilyName
}

/**
 * RocksDB column families besides the default one, each with the share of
 * SLUICE_ROCKSDB_WRITE_BUFFER_MB its memtables get. A space written in key order (events by their
 * time-ordered internal ID, an index by name then ID, dedup marks by time bucket), or consumed and
 * deleted within moments (the log), gets a family of its own: a file then spans only that space's
 * keys, so compaction moves it down the levels instead of rewriting it with every other space's keys
 * in between. A family's space has a one-letter prefix: a key's first character picks it.
 * `bloomFilter`: only dedup looks up keys that are mostly absent; the others are read by range, or
 * by keys that exist, where a filter saves nothing (their open files hold their index blocks instead:
 * core/rocks.ts). `blockCache`: the log has none, as consumers read it from the tail in memory, or once;
 * nor have the name and env indexes, read by range (a page of a listing, retention's seeks) from the OS's page
 * cache: with caches, retention's passes filled them ~1 MiB a minute towards 32 MiB each (bench/soak).
 */
export const FAMILIES = {
  log: { writeBufferShare: 1, bloomFilter: false, blockCache: false },
  events: { writeBufferShare: 1 / 2, bloomFilter: false, blockCache: true },
  eventsById: { writeBufferShare: 1 / 8, bloomFilter: false, blockCache: true },
  eventsByName: { writeBufferShare: 1 / 8, bloomFilter: false, blockCache: false },
  eventsByEnv: { writeBufferShare: 1 / 8, bloomFilter: false, blockCache: false },
  eventsByEnvName: { writeBufferShare: 1 / 8, bloomFilter: false, blockCache: false },
  dedup: { writeBufferShare: 1 / 8, bloomFilter: true, blockCache: true },
  dedupInternalIds: { writeBufferShare: 1 / 8, bloomFilter: false, blockCache: true },
} as const
export type FamilyName = keyof typeof FAMILIES

type Use = { scanned?: boolean; rangeDeleted?: boolean; family?: FamilyName }
const space = (prefix: string, owner: string, holds: string, use: Use = {}) =>
  ({
    prefix,
    owner,
    holds,
    scanned: use.scanned ?? false,
    rangeDeleted: use.rangeDeleted ?? false,
    family: use.family,
  }) satisfies KeySpace

export const KEY_SPACES = {
  logBatches: space('L', 'bus/local-layout.ts', '<topic>\\0<partition>\\0<first offset hex16> → record batch', {
    scanned: true,
    rangeDeleted: true,
    family: 'log',
  }),
  logOffsets: space('O', 'bus/local-layout.ts', '<group>\\0<topic>\\0<partition> → next offset', { scanned: true }),
  logTopics: space('T', 'bus/local.ts', '<topic> → topic spec JSON'),
  control: space('C', 'control/rocksdb.ts', '<kind>\\0<id> → control document JSON', { scanned: true }),
  dedup: space('D', 'dedup/rocksdb.ts', '[p<N>/]<bucket hex12>\\0<env>\\0<id> → <receivedAt>,<internalId>', {
    rangeDeleted: true,
    family: 'dedup',
  }),
  // Marks of events without a caller `id`, grouped per millisecond of their internal IDs: no bloom
  // filter, as only a caller id of ULID form looks a group up, and keys follow time within a bucket.
  dedupInternalIds: space(
    'U',
    'dedup/rocksdb.ts',
    '[p<N>/]<bucket hex12>\\0<env>\\0<internalId[0..10]> → <receivedAt>,<internalId>[,…][;…] (events without a caller id)',
    { rangeDeleted: true, family: 'dedupInternalIds' },
  ),
  events: space(
    'E',
    'store/rocksdb-events.ts',
    "<internalId> → event JSON, or <largest internalId><digest> → the lines of a millisecond's events",
    {
      scanned: true,
      rangeDeleted: true,
      family: 'events',
    },
  ),
  // Event indexes (store/rocksdb-index.ts): ‹v› is a value after its length.
  eventsById: space('I', 'store/rocksdb.ts', '‹dedup id›<internalId> → index entries', {
    scanned: true,
    rangeDeleted: true,
    family: 'eventsById',
  }),
  eventsByName: space('N', 'store/rocksdb.ts', '‹name›<internalId> → index entries', {
    scanned: true,
    rangeDeleted: true,
    family: 'eventsByName',
  }),
  eventsByEnv: space('G', 'store/rocksdb.ts', '‹env›<internalId> → index entries', {
    scanned: true,
    rangeDeleted: true,
    family: 'eventsByEnv',
  }),
  eventsByEnvName: space('P', 'store/rocksdb.ts', '‹env›‹name›<internalId> → index entries', {
    scanned: true,
    rangeDeleted: true,
    family: 'eventsByEnvName',
  }),
  eventsByReceivedAt: space('H', 'store/rocksdb.ts', '<receivedAt hex12><internalId> → entry (off-clock events only)', {
    scanned: true,
    rangeDeleted: true,
  }),
  runs: space('Rr', 'store/runs-rocksdb.ts', '<runId> → run JSON', { scanned: true }),
  runsByEvent: space('Re', 'store/runs-rocksdb.ts', "<eventId>\\0<runId> → ''", { scanned: true }),
  runsByFunction: space('Rf', 'store/runs-rocksdb.ts', "<functionId>\\0<runId> → ''", { scanned: true }),
  runsByStatus: space('Rs', 'store/runs-rocksdb.ts', "<status>\\0<runId> → ''", { scanned: true }),
  webhookRequests: space('W', 'store/requests-rocksdb.ts', '<webhookId>\\0<requestId> → record JSON', {
    scanned: true,
    rangeDeleted: true,
  }),
  webhookRequestsByStatus: space('X', 'store/requests-rocksdb.ts', "<webhookId>\\0<status>\\0<requestId> → ''", {
    scanned: true,
    rangeDeleted: true,
  }),
  runnerMarks: space('F', 'runner/rocksdb.ts', '<scope>\\0<runId> → highest processed seq', { rangeDeleted: true }),
  runnerParked: space('S', 'runner/rocksdb.ts', '<scope>\\0<dueAt hex12>\\0<runId>\\0<seq> → RunRecord JSON', {
    scanned: true,
    rangeDeleted: true,
  }),
  runnerParkedByRun: space('Q', 'runner/rocksdb.ts', '<scope>\\0<runId> → <dueAt hex12>\\0<seq> of its parked record', {
    rangeDeleted: true,
  }),
  runnerQueue: space(
    'B',
    'runner/rocksdb.ts',
    '<scope>\\0<flow key>\\0<order hex13>\\0<eventId>\\0<runId>\\0<seq> → RunRecord JSON',
    {
      scanned: true,
      rangeDeleted: true,
    },
  ),
  runnerQueuedByRun: space(
    'A',
    'runner/rocksdb.ts',
    '<scope>\\0<runId> → <flow key>\\0<order hex13>\\0<eventId>\\0<seq>',
    {
      rangeDeleted: true,
    },
  ),
  runnerFlow: space('K', 'runner/rocksdb.ts', '<scope>\\0<name>\\0<key> → flow state JSON (rate limits, batches, …)', {
    scanned: true,
    rangeDeleted: true,
  }),
  runnerCron: space('J', 'runner/rocksdb.ts', '<scope>\\0<cron schedule> → the last cron tick run (ms)', {
    rangeDeleted: true,
  }),
  waits: space('M', 'router/waits-rocksdb.ts', '<scope>\\0<match key>\\0<waitId> → wait registration JSON', {
    scanned: true,
    rangeDeleted: true,
  }),
  waitsByExpiry: space('Y', 'router/waits-rocksdb.ts', '<scope>\\0<expiresAt hex12>\\0<waitId> → match key', {
    scanned: true,
    rangeDeleted: true,
  }),
  waitsById: space('Z', 'router/waits-rocksdb.ts', '<scope>\\0<waitId> → <expiresAt hex12>\\0<match key>', {
    rangeDeleted: true,
  }),
  audit: space('a', 'store/audit-rocksdb.ts', '<entry ULID> → audit entry JSON', { scanned: true }),
  dataFormat: space('V', 'core/data-format.ts', 'the data format of the whole data dir (one version)'),
} as const

export type KeySpaceName = keyof typeof KEY_SPACES

/** The prefix of a space, or of a part of it (`sub` follows the space's prefix). */
export function keyPrefix(name: KeySpaceName, sub = ''): string {
  return KEY_SPACES[name].prefix + sub
}

/**
 * `{ gte, lt }` bounding exactly the keys that start with the space's prefix followed by `sub`:
 * `lt` is that prefix with its last character raised by one. Also the `start`/`end` of a range delete.
 * RocksDB orders keys by their UTF-8 bytes, that is by code point, so a character outside the BMP
 * (two UTF-16 units) is raised as one, and U+D7FF is followed by U+E000, not by a lone surrogate.
 */
export function keyRange(name: KeySpaceName, sub = ''): { gte: string; lt: string } {
  const gte = keyPrefix(name, sub)
  const pair = gte.length > 1 && /[\uD800-\uDBFF][\uDC00-\uDFFF]$/.test(gte)
  const head = gte.slice(0, pair ? -2 : -1)
  const last = gte.codePointAt(head.length)!
  return { gte, lt: head + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1) }
}

/** A range delete of everything under the space's prefix followed by `sub`. */
export function deleteRange(name: KeySpaceName, sub = ''): { type: 'delRange'; start: string; end: string } {
  const { gte, lt } = keyRange(name, sub)
  return { type: 'delRange', start: gte, end: lt }
}
