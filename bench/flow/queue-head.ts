// bench/flow/queue-head: what a read of a queue key's head costs once many records have passed
// through that key (runner/rocksdb.ts `queueHead`, which the scheduler calls each time the key's
// queue changes). Records leave the queue by delete, and a delete in RocksDB is a tombstone until
// compaction drops it: a scan from the key's start steps over every one still there. On a fresh
// RocksDB per case, `passed` records go through one queue key, `m` (queued, then dequeued, in writes
// of 100), 16 wait behind them, and the head (16) is read `reads` times: µs of wall time and of this
// process's CPU per read. Beside it, the same read of two keys no record has passed through, each
// with 16 waiting: `a`, which sorts before `m`, and `z`, after it (no record follows `z`'s).
// Usage: node --no-node-snapshot --conditions=sluice-source bench/flow/queue-head.ts
//   [passed, e.g. 0,1000,10000,50000] [reads (200)]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { report } from '../lib.ts'
import { round } from '../wrk.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksRunnerState } from '../../runner/rocksdb.ts'
import type { RunRecord } from '../../core/run-record.ts'

const counts = (process.argv[2] ?? '0,1000,10000,50000').split(',').map(Number)
const reads = Number(process.argv[3] ?? 200)
const HEAD = 16
const WRITE = 100

/** A queued record as the scheduler keeps one: only its queue place and IDs matter here. */
const record = (key: string, i: number): RunRecord =>
  ({
    runId: `run-${String(i).padStart(8, '0')}`,
    seq: 0,
    event: { internalId: `ev-${String(i).padStart(8, '0')}`, name: 'flow/bench', data: { n: i } },
    queue: { key, order: 1_700_000_000_000 + i },
    steps: [],
  }) as unknown as RunRecord

async function runCase(passed: number) {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-queue-head-'))
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  try {
    const state = createRocksRunnerState(rocks, 'bench')
    const none = { marks: [], parked: [], unparked: [] }
    for (let from = 0; from < passed; from += WRITE) {
      const batch = Array.from({ length: Math.min(WRITE, passed - from) }, (_, i) => record('m', from + i))
      await state.save({ ...none, queued: batch })
      await state.save({ ...none, dequeued: batch })
    }
    const waiting = (key: string) => Array.from({ length: HEAD }, (_, i) => record(key, passed + i))
    await state.save({ ...none, queued: [...waiting('a'), ...waiting('m'), ...waiting('z')] })
    const time = async (key: string) => {
      const cpu = process.cpuUsage()
      const started = process.hrtime.bigint()
      for (let i = 0; i < reads; i++) {
        const head = await state.queueHead(key, HEAD)
        if (head.length !== HEAD) throw new Error(`queue-head: read ${head.length} of ${HEAD}`)
      }
      const wallUs = Number(process.hrtime.bigint() - started) / 1000 / reads
      const used = process.cpuUsage(cpu)
      return { wallUs, cpuUs: (used.user + used.system) / reads }
    }
    const same = await time('m')
    const before = await time('a')
    const after = await time('z')
    return {
      'records passed through m': passed,
      'm: µs/read (wall)': round(same.wallUs, 0),
      'm: cpu µs/read': round(same.cpuUs, 0),
      'a (before m): cpu µs/read': round(before.cpuUs, 0),
      'z (after m): cpu µs/read': round(after.cpuUs, 0),
    }
  } finally {
    await rocks.close()
    await rm(dir, { recursive: true, force: true })
  }
}

const rows = []
for (const passed of counts) rows.push(await runCase(passed))
report('flow-queue-head', rows, { reads, head: HEAD })
