// bench/waits/sleeping: many runs asleep at once, held with bounded memory (issue #30). One fresh
// `sluice dev` starts runs of bench/waits/functions.ts's `sleeper` (step.sleep of 1 h) through the
// Event API in 500-event batches; at each stop (10k, 50k, 100k asleep by default) it waits until
// every consumer has caught up and RocksDB is idle, has V8 collect garbage (node's inspector, on
// loopback), and reads the server's RSS, V8's heap used and RocksDB's memory (/metrics), and the
// data dir's size (du --apparent-size). A sleeping run is a parked record in RocksDB
// (runner/rocksdb.ts), so RSS and heap should stop growing while the data dir grows. At the end the
// runs are counted over REST (status `waiting`), the server is stopped, and the bytes its RocksDB
// holds per sleeping run are summed by key space (keys and values as written, before compression).
// Usage: node --no-node-snapshot --conditions=sluice-source bench/waits/sleeping.ts [stops, e.g. 10000,50000,100000]
import { availableParallelism, loadavg } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { peakRssMb, report } from '../lib.ts'
import { cpuMicros, round, rssMb } from '../wrk.ts'
import { openRocks } from '../../core/rocks.ts'
import { KEY_SPACES, keyRange, type KeySpaceName } from '../../core/keyspaces.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { duKib, memoryOf, metricsOf, runsOf, sendAll, settled, startServer, sumOf } from './server.ts'

const stops = (process.argv[2] ?? '10000,50000,100000').split(',').map(Number)
const loadBefore = loadavg()[0]
const server = await startServer('sleeping', { inspect: true })
const rows: Array<Record<string, string | number>> = []
const points: Array<{ asleep: number; rssMb: number; heapUsedMb: number; rocksdbMb: number; dataDirMb: number }> = []

/** RSS, heap, RocksDB memory and data dir size now, as a row and a point. */
async function measure(asleep: number, extra: { runsPerSec?: number } = {}) {
  // What V8 holds live (after a full GC), and a few seconds for jemalloc's decay to return what it freed.
  await server.collectGarbage()
  await sleep(6_000)
  const memory = await memoryOf(server)
  const point = {
    asleep,
    rssMb: rssMb(server.pid),
    ...memory,
    dataDirMb: round(duKib(server.dataDir) / 1024, 1),
  }
  points.push(point)
  rows.push({
    asleep,
    'RSS MiB': point.rssMb,
    'V8 heap used MiB': point.heapUsedMb,
    'RocksDB mem MiB': point.rocksdbMb,
    'data dir MiB': point.dataDirMb,
    'data dir KiB/1k': asleep === 0 ? '-' : round((point.dataDirMb * 1024) / (asleep / 1000), 0),
    'started runs/s': extra.runsPerSec ?? '-',
  })
}

try {
  await settled(server)
  await measure(0)
  let sent = 0
  /** The server's CPU while runs were started and put to sleep (with the compaction it caused). */
  let cpuMicrosStarting = 0
  for (const stop of stops) {
    const started = Date.now()
    const cpuBefore = cpuMicros(server.pid)
    await sendAll(server, stop - sent, () => ({ name: 'bench/sleep', data: { sleep: '1h' } }))
    const { caughtUpAt } = await settled(server)
    cpuMicrosStarting += cpuMicros(server.pid) - cpuBefore
    // From the first request until every run of this stop was parked.
    await measure(stop, { runsPerSec: Math.round((stop - sent) / ((caughtUpAt - started) / 1000)) })
    sent = stop
  }
  const ended = sumOf(await metricsOf(server), 'sluice_function_runs_total')
  const asleep = (await runsOf(server, 'bench-sleeper', 'waiting')).length
  const peak = peakRssMb(server.pid)
  await server.stop()
  const spaces = await liveBytesBySpace(server.dataDir)
  const first = points[1]
  const last = points.at(-1)!
  const per1k = (a: number, b: number) => round((b - a) / ((last.asleep - first.asleep) / 1000), 2)
  report('waits-sleeping', rows, {
    asleepByRest: asleep,
    runsEnded: ended,
    rssMbPer1kSleeping: per1k(first.rssMb, last.rssMb),
    heapUsedMbPer1kSleeping: per1k(first.heapUsedMb, last.heapUsedMb),
    dataDirKibPer1kSleeping: round(
      ((last.dataDirMb - first.dataDirMb) * 1024) / ((last.asleep - first.asleep) / 1000),
      0,
    ),
    serverCpuUsPerRunStarted: round(cpuMicrosStarting / last.asleep, 1),
    // What RocksDB holds per sleeping run, by key space (core/keyspaces.ts): keys and values as written.
    liveKibPer1kSleeping: round(Object.values(spaces).reduce((a, b) => a + b, 0) / 1024 / (last.asleep / 1000), 0),
    liveBytesPerSleepingRun: Object.fromEntries(
      Object.entries(spaces)
        .filter(([, bytes]) => bytes / last.asleep >= 1)
        .map(([space, bytes]) => [space, Math.round(bytes / last.asleep)]),
    ),
    peakRssMb: peak,
    allocator: server.allocator,
    cpus: availableParallelism(),
    loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
  })
} finally {
  await server.close()
}

/** Bytes of keys and values in each key space of a stopped server's RocksDB. */
async function liveBytesBySpace(dataDir: string): Promise<Record<string, number>> {
  const rocks = await openRocks(join(dataDir, 'db'), rocksOptionsOf(DEFAULTS))
  const bytes: Record<string, number> = {}
  try {
    for (const name of Object.keys(KEY_SPACES) as KeySpaceName[]) {
      bytes[name] = 0
      for await (const { key, value } of rocks.scan({ ...keyRange(name), batch: 1024 }))
        bytes[name] += Buffer.byteLength(key) + value.length
    }
  } finally {
    await rocks.close()
  }
  return bytes
}
