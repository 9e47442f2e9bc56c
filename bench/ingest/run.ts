// bench/ingest: a bare fastify JSON echo vs Sluice's Event API (single events, keep-alive,
// 64 connections) vs 500-event batches, on loopback. Targets: single ≥ 0.6× echo; batched
// ≥ 250k events/s. Usage: node --conditions=sluice-source bench/ingest/run.ts [seconds]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startChild, load, peakRssMb, report } from '../lib.ts'

const seconds = Number(process.argv[2] ?? 10)
const single = JSON.stringify({ name: 'bench/order.created', data: { orderId: 'o-123', amount: 4200, currency: 'EUR', customer: { id: 'c-9', tier: 'gold' } } })
const batch = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ name: 'bench/order.created', data: { orderId: `o-${i}`, amount: i, currency: 'EUR' } })))

const rows: Array<Record<string, string | number>> = []
const echo = await startChild(['bench/ingest/echo.ts'])
await load(`${echo.url}/e/k`, single, 64, 2) // warm-up
const echoRun = await load(`${echo.url}/e/k`, single, 64, seconds)
rows.push({ case: 'fastify echo, single', 'req/s': echoRun.requestsPerSec, 'events/s': echoRun.requestsPerSec, 'p50 ms': echoRun.p50Ms, 'p99 ms': echoRun.p99Ms, 'rss MiB': peakRssMb(echo.child.pid!), 'non-2xx': echoRun.non2xx })
await echo.stop()

const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
// With the malloc setting `npm start` and the image use (scripts/start.sh).
const sluice = await startChild(['bin/sluice.js', 'dev', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'], { SLUICE_LOG_LEVEL: 'info', MALLOC_ARENA_MAX: '2' })
await load(`${sluice.url}/e/k`, single, 64, 2)
const singleRun = await load(`${sluice.url}/e/k`, single, 64, seconds)
rows.push({ case: 'sluice, single', 'req/s': singleRun.requestsPerSec, 'events/s': singleRun.requestsPerSec, 'p50 ms': singleRun.p50Ms, 'p99 ms': singleRun.p99Ms, 'rss MiB': peakRssMb(sluice.child.pid!), 'non-2xx': singleRun.non2xx })
await load(`${sluice.url}/e/k`, batch, 16, 2) // warm-up: the batch path's code is not optimised yet
const batchRun = await load(`${sluice.url}/e/k`, batch, 16, seconds)
rows.push({ case: 'sluice, 500-event batches', 'req/s': batchRun.requestsPerSec, 'events/s': batchRun.requestsPerSec * 500, 'p50 ms': batchRun.p50Ms, 'p99 ms': batchRun.p99Ms, 'rss MiB': peakRssMb(sluice.child.pid!), 'non-2xx': batchRun.non2xx })
await sluice.stop()
await rm(dataDir, { recursive: true, force: true })

report('ingest', rows, {
  seconds,
  singleVsEcho: Number((singleRun.requestsPerSec / echoRun.requestsPerSec).toFixed(2)),
  batchedEventsPerSec: batchRun.requestsPerSec * 500,
  targets: { singleVsEcho: 0.6, batchedEventsPerSec: 250_000 },
})
