// bench/kafka: distributed mode on one broker, in one run, on both Kafka clients:
// - the reference: a bare fastify JSON echo (bench/ingest/echo.ts) under the same single-event load;
// - each client's raw producer on the records Sluice's ingest writes (bench/kafka/raw.ts);
// - a Sluice ingest node per client: single events (64 connections) and 500-event batches (16),
//   loaded by wrk (one C thread), with the node's own CPU time per event and its peak RSS;
// - the whole pipeline per client: accepted → ClickHouse row (polled through the REST API every
//   20 ms, the newest 300: the list is newest first) and accepted → handler start, p50/p99, at 100 events/s.
// Targets for the default client (@platformatic/kafka): single ≥ 30,000 events/s and 500-event
// batches ≥ 150,000 events/s per ingest node, each within 0.8× of the raw producer; handler start
// p50 < 50 ms, ClickHouse row p50 < 150 ms.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/kafka/run.ts [seconds] [latency events]
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { upServices, downServices } from '../../tests/infra/lifecycle.ts'
import { readServicesFile } from '../../tests/infra/services.ts'
import { startChild, peakRssMb, report, type Child } from '../lib.ts'
import { cpuMicros, ensureWrk, round, wrk } from '../wrk.ts'
import { rawProducers, type KafkaClientName } from './raw.ts'

const seconds = Number(process.argv[2] ?? 10)
const latencyEvents = Number(process.argv[3] ?? 1000)
const CLIENTS: KafkaClientName[] = ['platformatic', 'kafkajs'] // the default first
const WARM_UP_S = 2
ensureWrk()
// Reuses the test command's services when they are up; stops only what this run started.
const hadServices = readServicesFile() !== undefined
const services = await upServices()
const prefix = `bench${Date.now().toString(36)}`
const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-kafka-'))
const loadBefore = loadavg()[0]
const rows: Array<Record<string, string | number>> = []
const row = (name: string, client: string, values: Record<string, string | number>) => {
  process.stderr.write(`bench/kafka: ${name}, ${client}: ${JSON.stringify(values)}\n`)
  rows.push({
    case: name,
    client,
    'events/s': '-',
    'p50 ms': '-',
    'p99 ms': '-',
    'cpu µs/event': '-',
    'peak MiB': '-',
    refused: '-',
    ...values,
  })
}

const event = (i: number) => ({ name: 'bench/order.created', data: { orderId: `o-${i}`, amount: i, currency: 'EUR' } })
const single = JSON.stringify(event(1))
const batch = JSON.stringify(Array.from({ length: 500 }, (_, i) => event(i)))

/** wrk against `server` for `seconds`, with the server's CPU time per accepted event. */
async function measured(server: Child, body: string, events: number, connections: number) {
  const pid = server.child.pid!
  const cpuBefore = cpuMicros(pid)
  const run = await wrk(`${server.url}/e/k`, body, connections, seconds)
  const accepted = run.requests - run.non2xx
  return {
    run,
    eventsPerSec: Math.round((accepted * events) / run.seconds),
    cpuPerEventUs: round((cpuMicros(pid) - cpuBefore) / (accepted * events), 2),
    peakMb: peakRssMb(pid),
  }
}
const loadRow = (m: Awaited<ReturnType<typeof measured>>) => ({
  'events/s': m.eventsPerSec,
  'p50 ms': m.run.p50Ms,
  'p99 ms': m.run.p99Ms,
  'cpu µs/event': m.cpuPerEventUs,
  'peak MiB': m.peakMb,
  refused: m.run.non2xx + m.run.socketErrors,
})

// 0. The reference: what a bare fastify server does on this machine under the same load.
const echo = await startChild(['bench/ingest/echo.ts'])
await wrk(`${echo.url}/e/k`, single, 64, WARM_UP_S)
const echoRun = await measured(echo, single, 1, 64)
row('fastify echo, single events, 64 connections', '-', loadRow(echoRun))
await echo.stop()

// 1. Raw producers: the records ingest writes, the same producer settings.
const raw = await rawProducers(services.kafkaBrokers, seconds)
const rawRate = (client: KafkaClientName, perSend: number) =>
  raw.find((r) => r.client === client && r.perSend === perSend && r.compression === 'none')!.recordsPerSec
for (const r of raw)
  row(
    `raw producer, ${r.perSend === 1 ? '1 record/send, 64' : '500 records/send, 16'} in flight${r.compression === 'none' ? '' : `, ${r.compression} (values to ${Math.round((r.sizeRatio ?? 1) * 100)} %)`}`,
    r.client,
    { 'events/s': r.recordsPerSec },
  )

const nodeEnv = (client: KafkaClientName, phase: string): NodeJS.ProcessEnv => ({
  SLUICE_KAFKA_CLIENT: client,
  SLUICE_KAFKA_BROKERS: services.kafkaBrokers.join(','),
  SLUICE_CLICKHOUSE_URL: services.clickhouseUrl,
  SLUICE_CLICKHOUSE_DATABASE: `${prefix}${phase}${client[0]}`,
  SLUICE_TOPIC_PREFIX: `${prefix}${phase}${client[0]}`,
  SLUICE_LOG_LEVEL: 'info',
  SLUICE_PARTITIONS: '4',
})
let nodes = 0
const node = (args: string[], env: NodeJS.ProcessEnv) =>
  startChild(
    ['bin/sluice.js', ...args, '--port', '0', '--ops-port', '0', '--data-dir', join(dir, String(nodes++))],
    env,
  )

// 2. A Sluice ingest node (a Dev Server ingest role: any key) per client.
const ingest: Record<string, { single: number; batched: number }> = {}
for (const client of CLIENTS) {
  const server = await node(['dev', '--role', 'ingest'], nodeEnv(client, 'i'))
  await wrk(`${server.url}/e/k`, single, 64, WARM_UP_S)
  const s = await measured(server, single, 1, 64)
  row('sluice ingest, single events, 64 connections', client, loadRow(s))
  const b = await measured(server, batch, 500, 16)
  row('sluice ingest, 500-event batches, 16 connections', client, loadRow(b))
  ingest[client] = { single: s.eventsPerSec, batched: b.eventsPerSec }
  await server.stop()
}

// With lz4 (SLUICE_KAFKA_COMPRESSION), on the default client.
{
  const server = await node(['dev', '--role', 'ingest'], {
    ...nodeEnv(CLIENTS[0], 'z'),
    SLUICE_KAFKA_COMPRESSION: 'lz4',
  })
  await wrk(`${server.url}/e/k`, batch, 16, WARM_UP_S)
  row(
    'sluice ingest, 500-event batches, 16 connections, lz4',
    CLIENTS[0],
    loadRow(await measured(server, batch, 500, 16)),
  )
  await server.stop()
}

// 3. The whole pipeline per client, on fresh topics and tables.
const latency: Record<string, { rowP50: number; handlerP50: number }> = {}
for (const client of CLIENTS) {
  const handlerLog = join(dir, `handlers-${client}.log`)
  const env = nodeEnv(client, 'l')
  const children = await Promise.all([
    node(['dev', '--role', 'api'], env),
    node(['dev', '--role', 'ingest'], env),
    node(['dev', '--role', 'transformer', '--role', 'dedup'], env),
    node(['dev', '--role', 'router'], env),
    node(['dev', '--role', 'sink'], env),
    node(['runner', '--functions', 'bench/e2e/functions.ts'], {
      ...env,
      SLUICE_BENCH_LOG: handlerLog,
      SLUICE_SIGNING_KEY: 'bench-signing-key-0123456789',
    }),
  ])
  const [api, pipelineIngest] = children
  const { toRow, toHandler } = await pipelineLatency(api, pipelineIngest, handlerLog)
  row(`accepted → ClickHouse row (${toRow.length}/${latencyEvents})`, client, {
    'p50 ms': pct(toRow, 50),
    'p99 ms': pct(toRow, 99),
  })
  row(`accepted → handler start (${toHandler.length}/${latencyEvents})`, client, {
    'p50 ms': pct(toHandler, 50),
    'p99 ms': pct(toHandler, 99),
  })
  latency[client] = { rowP50: pct(toRow, 50), handlerP50: pct(toHandler, 50) }
  await Promise.all(children.map((c) => c.stop()))
}

await rm(dir, { recursive: true, force: true })
if (!hadServices) await downServices()
const d = CLIENTS[0]
report('kafka', rows, {
  seconds,
  loadGenerator: 'wrk -t1',
  brokers: services.kafkaBrokers.length,
  loadAverage: { before: loadBefore, after: loadavg()[0] },
  defaultClient: {
    client: d,
    singleEventsPerSec: ingest[d].single,
    singleVsEcho: round(ingest[d].single / echoRun.eventsPerSec, 2),
    singleVsRaw: round(ingest[d].single / rawRate(d, 1), 2),
    batchedEventsPerSec: ingest[d].batched,
    batchedVsRaw: round(ingest[d].batched / rawRate(d, 500), 2),
    handlerStartP50Ms: latency[d].handlerP50,
    clickhouseRowP50Ms: latency[d].rowP50,
  },
  targets: {
    singleEventsPerSec: 30_000,
    batchedEventsPerSec: 150_000,
    vsRaw: 0.8,
    handlerStartP50Ms: 50,
    clickhouseRowP50Ms: 150,
  },
})
process.exit(0)

/** Sends `latencyEvents` events at 100/s; when each was accepted, appeared in the REST API and started its handler. */
async function pipelineLatency(api: Child, ingestNode: Child, handlerLog: string) {
  const now = () => performance.timeOrigin + performance.now()
  const accepted = new Map<string, number>()
  const storedAt = new Map<string, number>()
  let polling = true
  const poller = (async () => {
    while (polling) {
      const asked = now()
      const page = await fetch(`${api.url}/v1/events?name=bench/latency&limit=300`)
        .then((r) => r.json() as Promise<{ data: Array<{ internal_id: string }> }>)
        .catch(() => ({ data: [] }))
      for (const e of page.data) if (!storedAt.has(e.internal_id)) storedAt.set(e.internal_id, asked)
      await sleep(20)
    }
  })()
  const start = now()
  for (let i = 0; i < latencyEvents; i++) {
    const due = start + i * 10
    if (due > now()) await sleep(due - now())
    const r = await fetch(`${ingestNode.url}/e/k`, {
      method: 'POST',
      body: JSON.stringify({ name: 'bench/latency', data: { i } }),
    })
    const { ids } = (await r.json()) as { ids: string[] }
    accepted.set(ids[0], now())
  }
  const deadline = Date.now() + 120_000
  let handlerStarts = new Map<string, number>()
  while (Date.now() < deadline) {
    const lines = (await readFile(handlerLog, 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l.startsWith('latency '))
    handlerStarts = new Map(
      lines.map((l) => {
        const [, id, , at] = l.split(' ')
        return [id, Number(at)]
      }),
    )
    if (handlerStarts.size >= accepted.size && [...accepted.keys()].every((id) => storedAt.has(id))) break
    if (Date.now() % 5000 < 200)
      process.stderr.write(`bench/kafka: ${storedAt.size} stored, ${handlerStarts.size} handled of ${accepted.size}\n`)
    await sleep(200)
  }
  polling = false
  await poller
  return {
    toRow: [...accepted].filter(([id]) => storedAt.has(id)).map(([id, at]) => storedAt.get(id)! - at),
    toHandler: [...accepted].filter(([id]) => handlerStarts.has(id)).map(([id, at]) => handlerStarts.get(id)! - at),
  }
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const v = [...values].sort((x, y) => x - y)
  return round(v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)])
}
