// The schema on a ClickHouse cluster (clickhouseCluster set; docs/clickhouse.md, "On a cluster"): the
// same tables, columns, sorting keys and versions as on one server, in two parts each. `<table>_local`
// holds the rows on every replica of every shard, a ReplicatedReplacingMergeTree whose Keeper path
// comes from the servers' {shard} and {replica} macros; `<table>` is a Distributed table over it, which
// every read and insert names, so the analysts' queries are the one-server ones. The sharding key
// keeps one event's (run's, request's) rows on one shard, and the views fill each shard's key tables
// from its own inserts, so an event, its copies from retried inserts and its key rows always meet on
// one shard: FINAL collapses the copies there, and a lookup's IN reads the shard's own key table.
//
// Every statement runs ON CLUSTER (ClickHouse's distributed DDL queue: a host that is down runs it
// when it is back). Found on 18.16: a Distributed table takes no ALTER ON CLUSTER where a shard of
// one replica is marked internal_replication ("isn't replicated, but shard #2 is replicated"), and an
// INSERT into it sends its MATERIALIZED columns on, which the local table refuses. So the Distributed
// table is created after its local table's columns are all added, with each MATERIALIZED column as an
// ALIAS (same values for reads, nothing sent); a later column means dropping and recreating it (it
// holds no rows: inserts are synchronous).
import { sqlIdentifier, sqlString } from './clickhouse-sql.ts'
import {
  type SchemaStep,
  schemaSteps,
  TABLES,
  type TableSpec,
  type Tables,
  type ViewSpec,
} from './clickhouse-schema.ts'

/** The steps of either layout: the cluster's when one is named. */
export function layoutSteps(database: string, cluster?: string): SchemaStep[] {
  return cluster === undefined ? schemaSteps(database) : clusterSchemaSteps(database, cluster)
}

export function clusterSchemaStatements(database: string, cluster: string): string[] {
  return clusterSchemaSteps(database, cluster).map((s) => s.sql)
}

function clusterSchemaSteps(database: string, cluster: string, tables: Tables = TABLES): SchemaStep[] {
  const db = sqlIdentifier(database)
  const on = `ON CLUSTER ${sqlIdentifier(cluster)}`
  const steps: SchemaStep[] = [{ table: '', sql: `CREATE DATABASE IF NOT EXISTS ${db} ${on}` }]
  const table = (name: keyof Tables) => {
    const spec = tables[name] as TableSpec
    const local = `${name}_local`
    const path = `/clickhouse/tables/{shard}/${database}/${local}`
    const version = spec.version ? `, ${spec.version}` : ''
    const partition = spec.partition ? `\nPARTITION BY ${spec.partition}` : ''
    steps.push({
      table: local,
      sql: `CREATE TABLE IF NOT EXISTS ${db}.${local} ${on} (
${spec.columns}
) ENGINE = ReplicatedReplacingMergeTree(${sqlString(path)}, '{replica}'${version})${partition}
ORDER BY ${spec.order}`,
    })
    for (const column of spec.added ?? []) {
      steps.push({
        table: local,
        column: column.split(' ')[0],
        sql: `ALTER TABLE ${db}.${local} ${on} ADD COLUMN ${column}`,
      })
    }
    const columns = [spec.columns.replaceAll(' MATERIALIZED ', ' ALIAS '), ...(spec.added ?? []).map((c) => `    ${c}`)]
    const engine = `Distributed(${sqlString(cluster)}, ${sqlString(database)}, ${sqlString(local)}, ${spec.shardBy})`
    steps.push({
      table: name,
      sql: `CREATE TABLE IF NOT EXISTS ${db}.${name} ${on} (\n${columns.join(',\n')}\n) ENGINE = ${engine}`,
    })
  }
  const view = (name: keyof Tables) => {
    const spec = tables[name] as ViewSpec
    steps.push({
      table: name,
      sql: `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${name} ${on} TO ${db}.${spec.to}_local AS
${spec.select(`${db}.${spec.from}_local`)}`,
    })
  }
  table('events')
  table('event_keys')
  view('event_keys_mv')
  table('runs')
  table('run_keys')
  view('run_keys_mv')
  view('run_event_keys_mv')
  table('webhook_requests')
  table('removed_webhooks')
  table('audit_log')
  return steps
}
