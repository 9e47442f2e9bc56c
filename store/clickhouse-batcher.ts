// Group commit for INSERTs. ClickHouse writes a data part per INSERT and wants few, large
// ones; the store sink calls once per bus batch and partition, concurrently, so at modest
// rates it would send many small INSERTs. Here at most one INSERT of small calls per table
// is in flight: small calls that arrive meanwhile wait and go together in the next one. An
// idle table adds no delay (no timer), a busy one gets batches as large as what arrived
// during the last write. A call already big enough for a good INSERT goes at once, beside
// the queue, so large batches keep their parallelism. Each caller resolves only once the
// INSERT that holds its rows succeeded, and rejects with its error otherwise (its rows may
// or may not be written: a retry is idempotent).

export interface InsertBatcherConfig {
  /** Calls are joined until the next would pass this many rows. */
  maxRows: number
  /** A call of at least this many rows is an INSERT of its own, sent at once. */
  directRows: number
}

interface Waiter<Row> {
  rows: Row[]
  resolve(): void
  reject(err: unknown): void
}

export function createInsertBatcher<Row>(
  insert: (rows: Row[]) => Promise<void>,
  config: InsertBatcherConfig,
): (rows: Row[]) => Promise<void> {
  const queue: Array<Waiter<Row>> = []
  let writing = false

  function takeBatch(): Array<Waiter<Row>> {
    const batch = [queue.shift()!]
    let count = batch[0].rows.length
    while (queue.length > 0 && count + queue[0].rows.length <= config.maxRows) {
      count += queue[0].rows.length
      batch.push(queue.shift()!)
    }
    return batch
  }

  async function drain(): Promise<void> {
    writing = true
    while (queue.length > 0) {
      const batch = takeBatch()
      try {
        await insert(batch.flatMap((w) => w.rows))
        for (const w of batch) w.resolve()
      } catch (err) {
        for (const w of batch) w.reject(err)
      }
    }
    writing = false
  }

  return (rows) =>
    rows.length >= config.directRows
      ? insert(rows)
      : new Promise<void>((resolve, reject) => {
          queue.push({ rows, resolve, reject })
          if (!writing) void drain()
        })
}

/**
 * One row per key, the highest version, ties to the later row: the RocksDB adapters' rule.
 * Applied to each combined INSERT, as ClickHouse leaves unspecified which of two rows with
 * equal key and version inside one INSERT a ReplacingMergeTree keeps.
 */
export function keepNewest<Row>(rows: Row[], keyOf: (row: Row) => string, versionOf: (row: Row) => number): Row[] {
  const newest = new Map<string, Row>()
  for (const row of rows) {
    const key = keyOf(row)
    const seen = newest.get(key)
    if (seen === undefined || versionOf(row) >= versionOf(seen)) newest.set(key, row)
  }
  return newest.size === rows.length ? rows : [...newest.values()]
}
