// Control-plane documents and the store that holds them. Every node keeps the whole
// control plane in memory (it is small), so reads are synchronous: ingest authenticates
// without a round trip. Writes go through the adapter (RocksDB, or a compacted Kafka topic).

export interface EnvDoc {
  name: string
  kind: 'standard' | 'branch'
  createdAt: number
  archivedAt?: number
  /** Event API / webhook body limit for this environment; the server default when absent. */
  maxBodyBytes?: number
}

/** The name a key or webhook uses to belong to the branch group rather than one environment. */
export const BRANCH_GROUP = 'branch'

export interface KeyDoc {
  /** Public identifier, safe to list and show. */
  id: string
  /** sha256 of the key: the key itself is shown once at creation and never stored. */
  hash: string
  /** A standard environment's name, or BRANCH_GROUP. */
  env: string
  /** The key's first characters, so a person can tell keys apart. */
  prefix: string
  createdAt: number
  revokedAt?: number
}

export interface ControlDocs {
  env: EnvDoc
  /** Stored under the key's hash. */
  key: KeyDoc
  webhook: { id: string } & Record<string, unknown>
  function: { id: string } & Record<string, unknown>
}

export type ControlKind = keyof ControlDocs

export interface ControlStore {
  get<K extends ControlKind>(kind: K, id: string): ControlDocs[K] | undefined
  list<K extends ControlKind>(kind: K): Array<ControlDocs[K]>
  /** Resolves once durable (and, in distributed mode, visible to this node). */
  put<K extends ControlKind>(kind: K, id: string, doc: ControlDocs[K]): Promise<void>
  delete(kind: ControlKind, id: string): Promise<void>
  close(): Promise<void>
}
