// What differs between the two layouts of the store at run time (the schema's text is in
// clickhouse-schema.ts and clickhouse-cluster-schema.ts): creating what is missing, quietly, and the
// settings of an insert on a cluster.
import { createHash } from 'node:crypto'
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client'
import { SluiceError } from '../core/errors.ts'
import { settingLabel } from '../config/settings.ts'
import type { SchemaStep } from './clickhouse-schema.ts'
import { sqlString } from './clickhouse-sql.ts'

/**
 * Runs the steps whose table or column is missing. A restart after a start that stopped halfway
 * (or a cluster whose DDL queue has already run a step here) repeats none of what exists, so no
 * server logs an error for it; a column added meanwhile by another process is still taken as done.
 * On a cluster, what this server has is the test: a step it lacks runs ON CLUSTER again, which
 * IF NOT EXISTS makes harmless on the hosts that have it.
 */
export async function applySchema(client: ClickHouseClient, database: string, steps: SchemaStep[]): Promise<number> {
  // Processes that start together on a new database run the same steps at once, and 18.16 may fail
  // a step that meets another's with an error of its own (two ADD COLUMNs of one column: "Different
  // expressions with the same alias"). What another process made is then there: look again, run
  // what is still missing.
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyMissing(client, database, steps)
    } catch (err) {
      if (attempt >= SCHEMA_ATTEMPTS || !refusedByServer(err)) throw err
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt))
    }
  }
}

const SCHEMA_ATTEMPTS = 5
/** Who is refused stays refused: unknown user, no password, wrong password, no access. */
const ACCESS_CODES = new Set(['192', '194', '497', '516'])

/** An error of the server's own (a numbered exception), not one of reaching it or of access. */
function refusedByServer(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? '')
  return /^\d+$/.test(code) && !ACCESS_CODES.has(code)
}

async function applyMissing(client: ClickHouseClient, database: string, steps: SchemaStep[]): Promise<number> {
  const rows = async <Row>(query: string) => (await client.query({ query, format: 'JSONEachRow' })).json<Row>()
  const db = sqlString(database)
  const databases = await rows<{ name: string }>(`SELECT name FROM system.databases WHERE name = ${db}`)
  const tables = new Set(
    (await rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = ${db}`)).map((r) => r.name),
  )
  const columns = new Set(
    (await rows<{ table: string; name: string }>(`SELECT table, name FROM system.columns WHERE database = ${db}`)).map(
      (r) => `${r.table}.${r.name}`,
    ),
  )
  const exists = (step: SchemaStep) =>
    step.table === ''
      ? databases.length > 0
      : step.column === undefined
        ? tables.has(step.table)
        : columns.has(`${step.table}.${step.column}`)
  let ran = 0
  for (const step of steps) {
    if (exists(step)) continue
    await client.command({ query: step.sql }).catch((err) => columnExists(step, err))
    ran++
  }
  return ran
}

/** An `ADD COLUMN` of a column the table has: done already (18.16 and current releases word it alike). */
function columnExists(step: SchemaStep, err: unknown): void {
  if (step.column !== undefined && /column with this name already exists/.test(String((err as Error)?.message))) return
  throw err
}

export interface ClusterInfo {
  /** Replicas of the smallest shard, as system.clusters lists them on this server. */
  replicas: number
  shards: number
}

/** The named cluster as this server knows it: one it does not know is a setting to fix. */
export async function clusterInfo(client: ClickHouseClient, cluster: string): Promise<ClusterInfo> {
  const result = await client.query({
    query: `SELECT shard_num, count() AS replicas FROM system.clusters
      WHERE cluster = ${sqlString(cluster)} GROUP BY shard_num`,
    format: 'JSONEachRow',
  })
  const shards = await result.json<{ shard_num: number; replicas: number | string }>()
  if (shards.length === 0) {
    throw new SluiceError(
      'CONFIG_INVALID',
      `${settingLabel('clickhouseCluster')}: the ClickHouse server has no cluster ` +
        `${JSON.stringify(cluster)} in its remote_servers`,
    )
  }
  return { shards: shards.length, replicas: Math.min(...shards.map((s) => Number(s.replicas))) }
}

/** 0 (the default): a majority of the smallest shard's replicas (2 of 2, 2 of 3, 1 of 1). */
export function effectiveQuorum(setting: number, info: ClusterInfo): number {
  return setting > 0 ? setting : Math.floor(info.replicas / 2) + 1
}

/** ClickHouse took insert_deduplication_token from 22.2 on; before, replicated tables compare blocks' hashes. */
const DEDUPLICATION_TOKEN_SINCE: [number, number] = [22, 2]

// A quorum write waits this long for the replicas (ClickHouse's default is 10 minutes): past it the
// insert fails and the sink retries it, while /readyz says the store cannot write.
const QUORUM_TIMEOUT_MS = 10_000

/**
 * The settings of every insert on a cluster: synchronous through the Distributed table (it answers
 * once each shard has the rows, not once they sit in its local queue), and the quorum. On 22.2 and
 * later, `insert_deduplication_token` from the rows' identities (see deduplicationToken).
 */
export function clusterInsertSettings(quorum: number): ClickHouseSettings {
  return {
    insert_distributed_sync: 1,
    ...(quorum > 1 && { insert_quorum: String(quorum), insert_quorum_timeout: QUORUM_TIMEOUT_MS }),
  }
}

export function usesDeduplicationToken(version: string): boolean {
  const [major, minor] = version.split('.').map(Number)
  const [sinceMajor, sinceMinor] = DEDUPLICATION_TOKEN_SINCE
  return major > sinceMajor || (major === sinceMajor && minor >= sinceMinor)
}

/**
 * One batch's identity: its rows' keys and versions, in order. The same rows retried after a
 * timeout (the sink re-reads the same offsets) give the same token, so the replicas drop the repeat.
 */
export function deduplicationToken(identities: string[]): string {
  const hash = createHash('sha256')
  for (const id of identities) hash.update(id).update('\0')
  return hash.digest('hex').slice(0, 32)
}
