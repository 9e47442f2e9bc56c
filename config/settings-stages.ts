// Settings of the stages: partitions, dedup, the transform sandboxes, batch sizes, the local log and RocksDB.
// Batch sizes trade latency for throughput; the defaults are what the benchmarks under bench/ ran with.
import { bool, choice, int } from './setting-kinds.ts'

const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS
const MiB = 1024 * 1024

/** A stage's records per batch. */
const batch = (env: string, fallback: number, doc: string) => int({ env, min: 1, max: 100_000, default: fallback, doc })

export const STAGE_SETTINGS = {
  partitions: int({
    env: 'SLUICE_PARTITIONS',
    min: 1,
    max: 1024,
    default: 4,
    doc: 'Partitions of the topics Sluice creates: the most processes of one role that share the work.',
  }),
  dedupWindowMs: int({
    env: 'SLUICE_DEDUP_WINDOW_MS',
    min: 1000,
    default: DAY_MS,
    doc: 'How long an (env, id) is remembered: a repeat within it is dropped as a duplicate.',
  }),
  // Distributed mode refuses it: ClickHouse keeps the events there (config.ts).
  eventRetentionMs: int({
    env: 'SLUICE_EVENT_RETENTION_MS',
    min: 0,
    default: 0,
    doc: 'Embedded: events older than this are deleted; 0 keeps every event.',
  }),
  transformCpuTimeMs: int({
    env: 'SLUICE_TRANSFORM_CPU_TIME_MS',
    min: 1,
    max: 60_000,
    default: 100,
    doc: 'CPU time a webhook transform may use per request.',
  }),
  transformWallTimeMs: int({
    env: 'SLUICE_TRANSFORM_WALL_TIME_MS',
    min: 1,
    max: 300_000,
    default: 1000,
    doc: 'Wall-clock time a webhook transform may take per request.',
  }),
  transformIsolateMemoryMb: int({
    env: 'SLUICE_TRANSFORM_ISOLATE_MEMORY_MB',
    min: 8,
    max: 4096,
    default: 32,
    doc: "Heap of a transform's isolate.",
  }),
  transformMaxOutputBytes: int({
    env: 'SLUICE_TRANSFORM_MAX_OUTPUT_BYTES',
    min: 1024,
    default: MiB,
    doc: 'Largest result a transform may return.',
  }),
  transformIsolates: int({
    env: 'SLUICE_TRANSFORM_ISOLATES',
    min: 1,
    max: 256,
    default: 2,
    doc: 'Isolates that run transforms in parallel in one process.',
  }),
  // A transform not yet proven within its limits gets 1, so one webhook cannot take every isolate.
  transformWebhookConcurrency: int({
    env: 'SLUICE_TRANSFORM_WEBHOOK_CONCURRENCY',
    min: 1,
    max: 256,
    default: 32,
    doc: "Transformer: one webhook's requests transformed at once.",
  }),
  transformBudgetMs: int({
    env: 'SLUICE_TRANSFORM_BUDGET_MS',
    min: 1,
    max: 300_000,
    default: 100,
    doc: 'Transformer: a call running longer in the shared lane moves its webhook to the slow lane.',
  }),
  transformSlowIsolates: int({
    env: 'SLUICE_TRANSFORM_SLOW_ISOLATES',
    min: 1,
    max: 256,
    default: 1,
    doc: 'Transformer: isolates of the slow lane.',
  }),
  transformBreakerKills: int({
    env: 'SLUICE_TRANSFORM_BREAKER_KILLS',
    min: 1,
    max: 1000,
    default: 3,
    doc: "Transformer: limit kills (CPU, wall time, memory) in a row that pause a webhook's transform.",
  }),
  transformBreakerPauseMs: int({
    env: 'SLUICE_TRANSFORM_BREAKER_PAUSE_MS',
    min: 1000,
    max: DAY_MS,
    default: MINUTE_MS,
    doc: 'Transformer: how long a paused transform stays paused.',
  }),
  alertEvaluateIntervalMs: int({
    env: 'SLUICE_ALERT_EVALUATE_INTERVAL_MS',
    min: 100,
    max: 10 * MINUTE_MS,
    default: 15_000,
    doc: 'Api: how often the alert evaluator (one api process, by lease) measures every alert rule.',
  }),
  storeBatchRecords: batch('SLUICE_STORE_BATCH_RECORDS', 5000, 'Sink: events per write batch to the event store.'),
  transformerBatchRecords: batch('SLUICE_TRANSFORMER_BATCH_RECORDS', 256, 'Transformer: webhook requests per batch.'),
  runSinkBatchRecords: batch('SLUICE_RUN_SINK_BATCH_RECORDS', 2000, 'Sink: run records per write batch.'),
  routerBatchRecords: batch('SLUICE_ROUTER_BATCH_RECORDS', 1000, 'Router: events read per batch.'),
  runnerBatchRecords: batch('SLUICE_RUNNER_BATCH_RECORDS', 200, 'Runner: run records read per batch.'),
  dedupExpireIntervalMs: int({
    env: 'SLUICE_DEDUP_EXPIRE_INTERVAL_MS',
    min: 1000,
    default: MINUTE_MS,
    doc: 'Dedup: how often expired time buckets of seen ids are deleted.',
  }),
  functionMarkRetentionMs: int({
    env: 'SLUICE_FUNCTION_MARK_RETENTION_MS',
    min: MINUTE_MS,
    default: 7 * DAY_MS,
    doc: "Runner: how long a function's run marks (which runs already happened) are kept.",
  }),
  localLogBatchRecords: batch('SLUICE_LOCAL_LOG_BATCH_RECORDS', 1000, 'Embedded: records a consumer reads per batch.'),
  localLogLingerMs: int({
    env: 'SLUICE_LOCAL_LOG_LINGER_MS',
    min: 0,
    max: 1000,
    default: 2,
    doc: 'Embedded: how long the local log waits after a wake-up to gather a batch.',
  }),
  // Often, so that most of the log is deleted while still in a memtable, never flushed or compacted.
  localLogRetentionCheckMs: int({
    env: 'SLUICE_LOCAL_LOG_RETENTION_CHECK_MS',
    min: 10,
    default: 100,
    doc: 'Embedded: how often the local log deletes what every group has read.',
  }),
  localLogTailBytes: int({
    env: 'SLUICE_LOCAL_LOG_TAIL_BYTES',
    min: 64 * 1024,
    max: 1024 * MiB,
    default: 4 * MiB,
    doc: 'Embedded: per partition, the newest records kept in memory besides RocksDB.',
  }),
  localLogMaxBacklogRecords: int({
    env: 'SLUICE_LOCAL_LOG_MAX_BACKLOG_RECORDS',
    min: 0,
    default: 10_000,
    doc: 'Embedded: an Event API request waits while a stage is more records behind than this; 0: never.',
  }),
  localLogBacklogWaitMs: int({
    env: 'SLUICE_LOCAL_LOG_BACKLOG_WAIT_MS',
    min: 0,
    max: 60_000,
    default: 1000,
    doc: 'Embedded: how long such a request waits before it is answered 503 PIPELINE_BEHIND.',
  }),
  // On by default, so it takes a value (`--local-log-share-values false`) rather than being a switch.
  localLogShareValues: bool({
    env: 'SLUICE_LOCAL_LOG_SHARE_VALUES',
    default: true,
    doc: "Embedded: stages share the Event API's parsed events instead of decoding the records.",
  }),
  // Distributed mode never syncs: its RocksDB holds state rebuilt from Kafka's changelogs (config.ts).
  durability: choice(['always', 'off'], {
    env: 'SLUICE_DURABILITY',
    default: 'always',
    doc: 'Embedded: always answers once writes are fdatasynced to the disk; off once in the page cache (dev data).',
  }),
  rocksdbWriteBufferMb: int({
    env: 'SLUICE_ROCKSDB_WRITE_BUFFER_MB',
    min: 1,
    max: 4096,
    default: 16,
    doc: "RocksDB memtable size of the local log's and the default column family (others get a share).",
  }),
  rocksdbWriteBuffers: int({
    env: 'SLUICE_ROCKSDB_WRITE_BUFFERS',
    min: 2,
    max: 64,
    default: 2,
    doc: 'RocksDB memtables per column family at most (one filling, the rest flushing).',
  }),
  rocksdbMaxOpenFiles: int({
    env: 'SLUICE_ROCKSDB_MAX_OPEN_FILES',
    min: 20,
    max: 1_000_000,
    default: 1000,
    doc: 'RocksDB files open at once.',
  }),
}
