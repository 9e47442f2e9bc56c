// bench/soak: does `sluice dev` hold its memory and latency flat over a long run (issue #12, "Memory
// stays flat")? One fresh server takes 500-event batches at a fixed rate (by default half the peak,
// measured first with wrk on a server of its own) for 20 minutes, from an open-loop sender in this
// process: requests start on a 10 ms clock whether or not earlier ones have answered, at most 32 in
// flight. Per minute: requests, 2xx, refused (429/503: backpressure, not failure), p50/p99, the
// server's RSS (sampled every second: end, max and mean), its CPU per event and its consumer lag.
// At the end: RSS growth over the last three quarters (target < 3 %, issue #35: minute 15 → 60 of an hour), from the minutes' end samples and
// from their means, and whether every accepted event was stored once the pipeline caught up.
// Writes soak.json and soak.png (bench/soak/chart.ts) to --out.
// Usage: node --conditions=sluice-source bench/soak/run.ts [--minutes 20] [--rate EVENTS_PER_S |
//   --peak-fraction 0.5] [--batch 500] [--out DIR]
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { allocatorOf, peakRssMb, report, ROOT, startSluice } from '../lib.ts'
import { cpuMicros, ensureWrk, round, rssMb, wrk } from '../wrk.ts'
import { renderChart } from './chart.ts'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '20' },
    rate: { type: 'string' },
    'peak-fraction': { type: 'string', default: '0.5' },
    batch: { type: 'string', default: '500' },
    out: { type: 'string', default: join(ROOT, 'bench/soak/out') },
  },
})
const minutes = Number(values.minutes)
const batch = Number(values.batch)
const outDir = resolve(values.out)
const MINUTE_MS = 60_000
const TICK_MS = 10
const MAX_IN_FLIGHT = 32
const PEAK_SECONDS = 15
const STUCK_MS = 60_000
const TARGET_PERCENT = 3
const NAME = 'bench/soak.order'
const body = Buffer.from(
  JSON.stringify(
    Array.from({ length: batch }, (_, i) => ({
      name: NAME,
      data: { orderId: `o-${i}`, amount: 4200 + i, currency: 'EUR', customer: { id: 'c-9', tier: 'gold' } },
    })),
  ),
)

let peak: { eventsPerSec: number; refused: number; socketErrors: number } | undefined
if (values.rate === undefined) peak = await measurePeak()
const rate = values.rate !== undefined ? Number(values.rate) : peak!.eventsPerSec * Number(values['peak-fraction'])
const requestsPerSec = rate / batch

const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-soak-'))
const sluice = await startSluice(dataDir)
const pid = sluice.child.pid!
const rows: Array<Record<string, string | number>> = []
/** Per minute: RocksDB's memtables, block caches and table readers by column family, in MiB (where memory goes). */
const rocksdbByMinute: Array<{
  minute: number
  memtables: Record<string, number>
  blockCache: Record<string, number>
  tableReaders: Record<string, number>
}> = []
let accepted = 0
try {
  await sleep(500)
  const idleMb = rssMb(pid)
  const started = Date.now()
  const senderCpu = process.cpuUsage()
  const serverCpu = cpuMicros(pid)
  const sender = openLoop(sluice.url)
  for (let minute = 1; minute <= minutes; minute++) {
    const cpuBefore = cpuMicros(pid)
    const senderBefore = process.cpuUsage()
    let maxMb = 0
    const sampled: number[] = []
    while (Date.now() < started + minute * MINUTE_MS) {
      sampled.push(rssMb(pid))
      maxMb = Math.max(maxMb, sampled.at(-1)!)
      await sleep(Math.min(1000, started + minute * MINUTE_MS - Date.now()))
    }
    const m = sender.takeMinute()
    const events = m.ok * batch
    accepted += events
    const senderUs = process.cpuUsage(senderBefore)
    const row = {
      minute,
      sent: m.sent,
      '2xx': m.ok,
      refused: m.refused,
      errors: m.errors,
      skipped: m.skipped,
      'events/s': Math.round(events / 60),
      'p50 ms': percentile(m.latenciesMs, 0.5),
      'p99 ms': percentile(m.latenciesMs, 0.99),
      'RSS MiB': rssMb(pid),
      'max RSS MiB': Math.max(maxMb, rssMb(pid)),
      'mean RSS MiB': Math.round(sampled.reduce((a, b) => a + b, 0) / sampled.length),
      'cpu µs/event': events > 0 ? round((cpuMicros(pid) - cpuBefore) / events, 2) : 0,
      'sender cpu %': round(((senderUs.user + senderUs.system) / MINUTE_MS / 1000) * 100),
      lag: await consumerLag(sluice.url),
      ...(await memoryOf(sluice.url, minute)),
      ...anonymousOf(pid),
    }
    rows.push(row)
    process.stdout.write(`${JSON.stringify(row)}\n`)
  }
  await sender.stop()
  accepted += sender.takeMinute().ok * batch // answers that came in after the last minute closed
  const senderUs = process.cpuUsage(senderCpu)
  const loadSeconds = (Date.now() - started) / 1000
  const serverCpuS = (cpuMicros(pid) - serverCpu) / 1e6

  // Wait for the pipeline to catch up; a lag that stops going down for a while is reported, not waited on.
  const catchUpStarted = Date.now()
  let lagLeft = await consumerLag(sluice.url)
  for (let progressAt = Date.now(); lagLeft > 0 && Date.now() - progressAt < STUCK_MS; ) {
    await sleep(500)
    const lag = await consumerLag(sluice.url)
    if (lag < lagLeft) progressAt = Date.now()
    lagLeft = lag
  }
  const catchUpMs = Date.now() - catchUpStarted
  // The pipeline's topics keep order (one partition each in embedded mode): once the last event
  // accepted is stored, so is every one before it. The counters say none was dropped on the way.
  const lastId = sender.lastAcceptedId()
  const lastStored = lastId !== undefined && (await fetch(`${sluice.url}/v1/events/${lastId}`)).status === 200
  const after = await metrics(sluice.url)
  const serverAccepted = metricSum(after, 'sluice_ingest_events_accepted_total')
  const passedDedup = metricSum(after, 'sluice_dedup_events_total')

  // Growth over the last three quarters of the run: minute 5 → 20 for the full 20 minutes.
  const baseMinute = Math.max(1, minutes - Math.floor((minutes * 3) / 4))
  const baseMb = Number(rows[baseMinute - 1]['RSS MiB'])
  const endMb = Number(rows[rows.length - 1]['RSS MiB'])
  // The same over each minute's mean of its 1-second samples: buffers waiting for V8's GC swing a
  // single sample by tens of MiB.
  const baseMeanMb = Number(rows[baseMinute - 1]['mean RSS MiB'])
  const endMeanMb = Number(rows[rows.length - 1]['mean RSS MiB'])
  const summary = {
    rate: Math.round(rate),
    batch,
    requestsPerSec: round(requestsPerSec, 2),
    minutes,
    allocator: allocatorOf(pid),
    peak: peak && { ...peak, seconds: PEAK_SECONDS, fraction: Number(values['peak-fraction']) },
    idleRssMb: idleMb,
    peakRssMb: peakRssMb(pid),
    growth: {
      fromMinute: baseMinute,
      toMinute: minutes,
      fromMb: baseMb,
      toMb: endMb,
      percent: baseMinute < minutes ? round(((endMb - baseMb) / baseMb) * 100, 2) : null,
      meanPercent: baseMinute < minutes ? round(((endMeanMb - baseMeanMb) / baseMeanMb) * 100, 2) : null,
      targetPercent: TARGET_PERCENT,
    },
    cpu: {
      serverSeconds: round(serverCpuS),
      serverCorePercent: round((serverCpuS / loadSeconds) * 100),
      senderSeconds: round((senderUs.user + senderUs.system) / 1e6),
      senderCorePercent: round(((senderUs.user + senderUs.system) / 1e6 / loadSeconds) * 100),
    },
    catchUpMs,
    lagLeft,
    accepted,
    serverAccepted,
    passedDedup,
    lastStored,
    allStored: lastStored && serverAccepted === accepted && passedDedup === accepted,
  }
  await mkdir(outDir, { recursive: true })
  const date = `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC`
  await writeFile(
    join(outDir, 'soak.json'),
    `${JSON.stringify({ bench: 'soak', date, ...summary, rows, rocksdbByMinute }, null, 2)}\n`,
  )
  const g = summary.growth
  const note =
    `${summary.allocator}: RSS growth, minute ${g.fromMinute} → ${g.toMinute}: ${g.percent ?? 'n/a'} % ` +
    `(minute means ${g.meanPercent ?? 'n/a'} %; target < ${TARGET_PERCENT} %); peak ${summary.peakRssMb} MiB; ` +
    `${accepted.toLocaleString('en')} accepted, ${summary.allStored ? 'all stored' : 'NOT all stored'}; ` +
    (lagLeft > 0 ? `lag stuck at ${lagLeft}` : `caught up in ${round(catchUpMs / 1000)} s`)
  await renderChart(join(outDir, 'soak.png'), rows, {
    rate: summary.rate,
    batch,
    date,
    baseMinute,
    baseMb,
    targetPercent: TARGET_PERCENT,
    note,
  })
  report('soak', rows, { ...summary, out: outDir })
} finally {
  await sluice.stop()
  await rm(dataDir, { recursive: true, force: true })
}

/** 2xx events per second under wrk at 16 connections, on a server of its own so the soak starts fresh. */
async function measurePeak() {
  ensureWrk()
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-soak-peak-'))
  const server = await startSluice(dir)
  try {
    await sleep(500)
    await wrk(`${server.url}/e/k`, body.toString(), 16, 2) // warm up
    while ((await consumerLag(server.url)) > 0) await sleep(200)
    const run = await wrk(`${server.url}/e/k`, body.toString(), 16, PEAK_SECONDS)
    // wrk's non2xx counts every answer outside 2xx/3xx: here 429/503 backpressure.
    const ok = run.requests - run.non2xx
    return { eventsPerSec: Math.round((ok * batch) / run.seconds), refused: run.non2xx, socketErrors: run.socketErrors }
  } finally {
    await server.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

interface MinuteCounts {
  sent: number
  ok: number
  refused: number
  errors: number
  /** Due on the clock but not started: MAX_IN_FLIGHT requests were waiting for answers. */
  skipped: number
  latenciesMs: number[]
}

/** Starts requests on a fixed clock (open loop): a slow answer does not slow the sending. */
function openLoop(url: string) {
  const fresh = (): MinuteCounts => ({ sent: 0, ok: 0, refused: 0, errors: 0, skipped: 0, latenciesMs: [] })
  let counts = fresh()
  let due = 0 // requests started or skipped since the start
  let inFlight = 0
  let lastAccepted: string | undefined
  const started = performance.now()
  const send = async () => {
    const at = process.hrtime.bigint()
    inFlight++
    counts.sent++
    try {
      const answer = await fetch(`${url}/e/k`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      const text = await answer.text()
      const c = counts // the minute the answer came in
      if (answer.status >= 200 && answer.status < 300) {
        c.ok++
        lastAccepted = (JSON.parse(text) as { ids: string[] }).ids.at(-1)
        c.latenciesMs.push(Number(process.hrtime.bigint() - at) / 1e6)
      } else if (answer.status === 429 || answer.status === 503) c.refused++
      else c.errors++
    } catch {
      counts.errors++
    } finally {
      inFlight--
    }
  }
  const timer = setInterval(() => {
    const target = Math.floor(((performance.now() - started) / 1000) * requestsPerSec)
    for (; due < target; due++) {
      if (inFlight < MAX_IN_FLIGHT) void send()
      else counts.skipped++
    }
  }, TICK_MS)
  return {
    takeMinute(): MinuteCounts {
      const c = counts
      counts = fresh()
      return c
    },
    /** The internal ID of the last event of the latest request answered 2xx. */
    lastAcceptedId: () => lastAccepted,
    async stop() {
      clearInterval(timer)
      while (inFlight > 0) await sleep(10)
    },
  }
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = values.toSorted((a, b) => a - b)
  return round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))])
}

async function metrics(url: string): Promise<string> {
  return await (await fetch(`${url}/metrics`)).text()
}

/** V8's heap and buffers, RocksDB's memtables, block caches and table readers now, in MiB; each family's into `rocksdbByMinute`. */
async function memoryOf(url: string, minute: number) {
  const text = await metrics(url)
  const byFamily = (kind: string) => {
    const mib: Record<string, number> = {}
    for (const [labels, value] of samples(text, 'sluice_rocksdb_memory_bytes'))
      if (labels.includes(`kind="${kind}"`)) mib[/family="(\w+)"/.exec(labels)?.[1] ?? ''] = round(value / 2 ** 20)
    return mib
  }
  const memtables = byFamily('memtables')
  const blockCache = byFamily('block_cache')
  const tableReaders = byFamily('table_readers')
  rocksdbByMinute.push({ minute, memtables, blockCache, tableReaders })
  const sum = (mib: Record<string, number>) => round(Object.values(mib).reduce((a, b) => a + b, 0))
  return {
    'heap MiB': round(metricSum(text, 'nodejs_heap_size_total_bytes') / 2 ** 20),
    'buffers MiB': round(metricSum(text, 'nodejs_external_memory_bytes') / 2 ** 20),
    'memtables MiB': sum(memtables),
    'caches MiB': sum(blockCache),
    'readers MiB': sum(tableReaders),
  }
}

/** The process's anonymous memory and the part of it in transparent huge pages (a step in RSS that neither V8
 * nor RocksDB report shows here first). */
function anonymousOf(pid: number) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
  const mib = (field: string) => round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) / 1024)
  return { 'anon MiB': mib('Anonymous'), 'anon huge MiB': mib('AnonHugePages') }
}

async function consumerLag(url: string): Promise<number> {
  return metricSum(await metrics(url), 'sluice_consumer_lag_records')
}

/** A metric's samples from Prometheus text: each one's labels (as written) and value. */
function* samples(text: string, name: string): Generator<[string, number]> {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line)
    if (match?.[1] === name) yield [match[2] ?? '', Number(match[3])]
  }
}

/** The sum of a metric's samples over all label sets, from Prometheus text. */
function metricSum(text: string, name: string): number {
  let sum = 0
  for (const [, value] of samples(text, name)) sum += value
  return sum
}
