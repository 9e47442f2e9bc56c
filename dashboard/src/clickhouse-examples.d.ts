// Resolved by scripts/build-dashboard.ts: the example queries of docs/clickhouse.md.
declare module 'sluice:clickhouse-examples' {
  const examples: Array<{ title: string; sql: string }>
  export default examples
}
