import type { WaitRegistration } from './waits-types.ts'

/**
 * The open waits of one partition of `waits`, indexed by match key and by expiry. Embedded: the shared
 * RocksDB (router/waits-rocksdb.ts); distributed: a RocksDB per partition backed by a compacted
 * changelog (router/waits-changelog.ts), restored when the partition moves.
 */
export interface WaitStore {
  /** The waits registered under each of `keys` (match keys), by wait ID; keys without any are left out. */
  findMany(keys: string[]): Promise<Map<string, WaitRegistration[]>>
  /** One atomic write: new registrations, and waits forgotten (matched, removed or expired) by ID. */
  apply(change: { put: WaitRegistration[]; remove: string[] }): Promise<void>
  /** The IDs of waits that expired at or before `nowMs`, at most `limit`. */
  expired(nowMs: number, limit: number): Promise<string[]>
  close(): Promise<void>
}
