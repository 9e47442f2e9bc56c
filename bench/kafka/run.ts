// bench/kafka: on one broker, in one run — a raw kafkajs producer sending the same records
// Sluice's ingest writes (Avro events, idempotent, acks=all), Sluice ingest nodes (single
// events over 64 connections, 500-event batches), and on the whole distributed pipeline the
// latency accepted → ClickHouse row and accepted → handler start. Target: ingest ≥ 0.7× raw.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/kafka/run.ts [seconds] [latency events]
// With SLUICE_KAFKA_CLIENT=platformatic the Sluice nodes run on bus/kafka-platformatic.ts (the
// raw phase stays kafkajs); bench/kafka/raw.ts puts both clients' raw producers side by side.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Kafka, logLevel } from 'kafkajs'
import pino from 'pino'
import { createAvroCodecs } from '../../bus/avro.ts'
import { topicNames } from '../../bus/topics.ts'
import { newUlid } from '../../core/ids.ts'
import { upServices, downServices } from '../../tests/infra/lifecycle.ts'
import { readServicesFile } from '../../tests/infra/services.ts'
import { startChild, load, report, type Child } from '../lib.ts'

const seconds = Number(process.argv[2] ?? 10)
const latencyEvents = Number(process.argv[3] ?? 1000)
// Reuses the test command's services when they are up; stops only what this run started.
const hadServices = readServicesFile() !== undefined
const services = await upServices()
const prefix = `bench${Date.now().toString(36)}`
const env = {
  SLUICE_KAFKA_BROKERS: services.kafkaBrokers.join(','),
  SLUICE_CLICKHOUSE_URL: services.clickhouseUrl,
  SLUICE_CLICKHOUSE_DATABASE: prefix,
  SLUICE_TOPIC_PREFIX: prefix,
  SLUICE_LOG_LEVEL: 'info',
  SLUICE_PARTITIONS: '4',
}
const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-kafka-'))
const children: Child[] = []
let nodes = 0
const node = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
  extra = { ...phaseEnv, ...extra }
  const child = await startChild(
    ['bin/sluice.js', ...args, '--port', '0', '--ops-port', '0', '--data-dir', join(dir, String(nodes++))],
    {
      ...env,
      ...extra,
    },
  )
  children.push(child)
  return child
}
const rows: Array<Record<string, string | number>> = []
let phaseEnv: NodeJS.ProcessEnv = {}
const loadBefore = loadavg()[0]

// 1. Raw kafkajs: the records ingest would write, with the same producer settings.
const codecs = await createAvroCodecs({ topics: topicNames(prefix) }, pino({ level: 'silent' }))
const kafka = new Kafka({ clientId: 'bench-raw', brokers: services.kafkaBrokers, logLevel: logLevel.NOTHING })
const admin = kafka.admin()
await admin.connect()
const rawTopic = `${prefix}.raw-bench`
await admin.createTopics({ topics: [{ topic: rawTopic, numPartitions: 4 }] })
await admin.disconnect()
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
await producer.connect()
const message = (i: number) => {
  const internalId = newUlid()
  const value = codecs.event.encode({
    internalId,
    id: internalId,
    name: 'bench/order.created',
    data: { orderId: `o-${i}`, amount: i, currency: 'EUR' },
    ts: Date.now(),
    env: 'production',
    receivedAt: Date.now(),
    source: { kind: 'api' },
  })
  return { key: `production\0${internalId}`, value }
}
async function rawPhase(perSend: number, concurrency: number): Promise<number> {
  let sent = 0
  const deadline = Date.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await producer.send({
          topic: rawTopic,
          acks: -1,
          messages: Array.from({ length: perSend }, (_, i) => message(sent + i)),
        })
        sent += perSend
      }
    }),
  )
  return Math.round(sent / seconds)
}
const rawSingle = await rawPhase(1, 64)
const rawBatched = await rawPhase(500, 16)
await producer.disconnect()
rows.push({ case: 'raw kafkajs, 1 record/send, 64 in flight', 'events/s': rawSingle, 'p50 ms': '-', 'p99 ms': '-' })
rows.push({ case: 'raw kafkajs, 500 records/send, 16 in flight', 'events/s': rawBatched, 'p50 ms': '-', 'p99 ms': '-' })

// 2. Sluice ingest (a Dev Server ingest node: any key) on the same broker.
const ingest = await node(['dev', '--role', 'ingest'])
const single = JSON.stringify({ name: 'bench/order.created', data: { orderId: 'o-1', amount: 1, currency: 'EUR' } })
const batch = JSON.stringify(
  Array.from({ length: 500 }, (_, i) => ({
    name: 'bench/order.created',
    data: { orderId: `o-${i}`, amount: i, currency: 'EUR' },
  })),
)
await load(`${ingest.url}/e/k`, single, 16, 2)
const s = await load(`${ingest.url}/e/k`, single, 64, seconds)
rows.push({
  case: 'sluice ingest, single events, 64 connections',
  'events/s': s.requestsPerSec,
  'p50 ms': s.p50Ms,
  'p99 ms': s.p99Ms,
})
const b = await load(`${ingest.url}/e/k`, batch, 16, seconds)
rows.push({
  case: 'sluice ingest, 500-event batches, 16 connections',
  'events/s': b.requestsPerSec * 500,
  'p50 ms': b.p50Ms,
  'p99 ms': b.p99Ms,
})
await ingest.stop()
children.pop()

// 3. The whole pipeline: accepted → ClickHouse row (polled through the REST API) and → handler start.
// Fresh topics and tables: phase 2's hundreds of thousands of events are not a backlog here.
phaseEnv = { SLUICE_TOPIC_PREFIX: `${prefix}l`, SLUICE_CLICKHOUSE_DATABASE: `${prefix}l` }
const handlerLog = join(dir, 'handlers.log')
const api = await node(['dev', '--role', 'api'])
let pipelineIngest!: Child
await Promise.all([
  node(['dev', '--role', 'ingest']).then((c) => {
    pipelineIngest = c
  }),
  node(['dev', '--role', 'transformer', '--role', 'dedup']),
  node(['dev', '--role', 'router']),
  node(['dev', '--role', 'sink']),
  node(['runner', '--functions', 'bench/e2e/functions.ts'], {
    SLUICE_BENCH_LOG: handlerLog,
    SLUICE_SIGNING_KEY: 'bench-signing-key-0123456789',
  }),
])
const now = () => performance.timeOrigin + performance.now()
const accepted = new Map<string, number>()
const storedAt = new Map<string, number>()
let polling = true
const poller = (async () => {
  while (polling) {
    const page = await fetch(`${api.url}/v1/events?name=bench/latency&limit=1000`)
      .then((r) => r.json() as Promise<{ data: Array<{ internal_id: string }> }>)
      .catch(() => ({ data: [] }))
    const t = now()
    for (const e of page.data) if (!storedAt.has(e.internal_id)) storedAt.set(e.internal_id, t)
    await sleep(20)
  }
})()
const start = now()
for (let i = 0; i < latencyEvents; i++) {
  const due = start + i * 10 // 100 events/s
  if (due > now()) await sleep(due - now())
  const r = await fetch(`${pipelineIngest.url}/e/k`, {
    method: 'POST',
    body: JSON.stringify({ name: 'bench/latency', data: { i } }),
  })
  const { ids } = (await r.json()) as { ids: string[] }
  accepted.set(ids[0], now())
}
const deadline = Date.now() + 120_000
let handlerStarts = new Map<string, number>()
while (Date.now() < deadline) {
  const lines = (await readFile(handlerLog, 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith('latency '))
  handlerStarts = new Map(
    lines.map((l) => {
      const [, id, , at] = l.split(' ')
      return [id, Number(at)]
    }),
  )
  if (handlerStarts.size >= accepted.size && [...accepted.keys()].every((id) => storedAt.has(id))) break
  await sleep(200)
}
polling = false
await poller
const pct = (values: number[], p: number) => {
  const v = [...values].sort((x, y) => x - y)
  return Math.round(v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)] * 10) / 10
}
const toRow = [...accepted].filter(([id]) => storedAt.has(id)).map(([id, at]) => storedAt.get(id)! - at)
const toHandler = [...accepted].filter(([id]) => handlerStarts.has(id)).map(([id, at]) => handlerStarts.get(id)! - at)
rows.push({
  case: `accepted → ClickHouse row (${toRow.length}/${accepted.size}, polled every 20 ms)`,
  'events/s': '-',
  'p50 ms': pct(toRow, 50),
  'p99 ms': pct(toRow, 99),
})
rows.push({
  case: `accepted → handler start (${toHandler.length}/${accepted.size})`,
  'events/s': '-',
  'p50 ms': pct(toHandler, 50),
  'p99 ms': pct(toHandler, 99),
})

await Promise.all(children.map((c) => c.stop()))
await rm(dir, { recursive: true, force: true })
if (!hadServices) await downServices()
report('kafka', rows, {
  seconds,
  loadAverage: { before: loadBefore, after: loadavg()[0] },
  singleVsRaw: Number((s.requestsPerSec / rawSingle).toFixed(2)),
  batchedVsRaw: Number(((b.requestsPerSec * 500) / rawBatched).toFixed(2)),
  target: 0.7,
})
process.exit(0)
