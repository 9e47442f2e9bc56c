export interface DedupKey {
  env: string
  id: string
  receivedAt: number
}
export interface SeenEntry extends DedupKey {
  internalId: string
}

/** Remembers the first event per (env, id) for a time window. */
export interface DedupStore {
  /** For each key: the internal ID of an earlier event with that (env, id) within the window, or null. */
  lookup(keys: DedupKey[]): Promise<Array<string | null>>
  markSeen(entries: SeenEntry[]): Promise<void>
  /** Drops whole time buckets older than the window (range deletes, not a key-by-key sweep). */
  expire(nowMs: number): Promise<void>
  close(): Promise<void>
}
