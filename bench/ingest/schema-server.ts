// bench/ingest/schema-server: the server CPU the schema check adds per event, end to end: the Event
// API loaded by wrk with a 10-field order event, single events and 500-event batches, on a server
// without a schema (mode off) and on one with a realistic schema of the event in warn mode (every
// event checked, all valid). Each case on a fresh `sluice dev`; CPU is the server's utime + stime per
// accepted event, the pipeline's catch-up included (the check runs at ingest, before acknowledging).
// Not via scripts/start.sh (it may run npm ci): node directly, glibc malloc. Rough on a shared machine.
// Usage: node --conditions=sluice-source bench/ingest/schema-server.ts [seconds]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type Child, report, startChild } from '../lib.ts'
import { cpuMicros, ensureWrk, round, wrk } from '../wrk.ts'

const seconds = Number(process.argv[2] ?? 10)
const WARM_UP_S = 2
const NAME = 'bench/order.placed'

/** An order of ten fields (one nested object), ~330 bytes of JSON. */
const order = (i: number) => ({
  name: NAME,
  data: {
    orderId: `o-${i}`,
    amount: 4200 + i,
    currency: 'EUR',
    customer: { id: 'c-9', tier: 'gold' },
    email: 'buyer@example.com',
    placedAt: '2026-11-26T12:00:00Z',
    channel: 'web',
    items: 3,
    gift: false,
    coupon: 'WINTER',
  },
})
const SCHEMA = {
  type: 'object',
  properties: {
    orderId: { type: 'string', pattern: '^o-[0-9]+$', maxLength: 64 },
    amount: { type: 'integer', minimum: 0 },
    currency: { enum: ['EUR', 'USD', 'GBP'] },
    customer: {
      type: 'object',
      properties: { id: { type: 'string' }, tier: { enum: ['free', 'silver', 'gold'] } },
      required: ['id'],
      additionalProperties: false,
    },
    email: { type: 'string', format: 'email' },
    placedAt: { type: 'string', format: 'date-time' },
    channel: { enum: ['web', 'ios', 'android', 'pos'] },
    items: { type: 'integer', minimum: 1, maximum: 1000 },
    gift: { type: 'boolean' },
    coupon: { type: ['string', 'null'], maxLength: 32 },
  },
  required: ['orderId', 'amount', 'currency', 'customer', 'placedAt'],
  additionalProperties: false,
}
const CASES = [
  { case: 'single', body: JSON.stringify(order(1)), events: 1, connections: 64 },
  {
    case: '500-event batches',
    body: JSON.stringify(Array.from({ length: 500 }, (_, i) => order(i))),
    events: 500,
    connections: 16,
  },
]

ensureWrk()
const rows: Array<Record<string, string | number>> = []
const cpuPerEvent: Record<string, number> = {}
for (const c of CASES) {
  for (const schema of [false, true]) {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
    const sluice = await startChild([
      'bin/sluice.js',
      'dev',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--log-level',
      'warn',
    ])
    if (schema) await withSchema(sluice)
    const pid = sluice.child.pid!
    await wrk(`${sluice.url}/e/k`, c.body, c.connections, WARM_UP_S)
    await drained(sluice)
    const before = cpuMicros(pid)
    const run = await wrk(`${sluice.url}/e/k`, c.body, c.connections, seconds)
    await drained(sluice)
    const accepted = run.requests - run.non2xx
    const perEvent = (cpuMicros(pid) - before) / (accepted * c.events)
    const mode = schema ? 'warn, 10-field schema' : 'off, no schema'
    cpuPerEvent[`${c.case}, ${mode}`] = perEvent
    rows.push({
      case: c.case,
      mode,
      'events/s': Math.round((accepted * c.events) / run.seconds),
      'cpu µs/event': round(perEvent, 2),
      refused: run.non2xx,
    })
    await sluice.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}
const added = Object.fromEntries(
  CASES.map((c) => [
    c.case,
    round(cpuPerEvent[`${c.case}, warn, 10-field schema`] - cpuPerEvent[`${c.case}, off, no schema`], 2),
  ]),
)
report('ingest-schema-server', rows, { seconds, loadGenerator: 'wrk -t1', addedCpuPerEventUs: added, targetUs: 2 })
process.stdout.write(`added server CPU per event (µs): ${JSON.stringify(added)}\n`)

async function withSchema(server: Child): Promise<void> {
  const put = await fetch(`${server.url}/v1/schemas/${encodeURIComponent(NAME)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: SCHEMA }),
  })
  const patch = await fetch(`${server.url}/v1/envs/production`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema_mode: 'warn' }),
  })
  if (!put.ok || !patch.ok) throw new Error(`schema setup: ${put.status} ${await put.text()} ${patch.status}`)
  // Every event valid: a refused or flagged one would measure something else.
  const probe = await fetch(`${server.url}/e/k`, { method: 'POST', body: JSON.stringify(order(0)) })
  const { ids } = (await probe.json()) as { ids: string[] }
  await drained(server)
  const stored = (await (await fetch(`${server.url}/v1/events/${ids[0]}`)).json()) as { data: object }
  if ('schema_violations' in stored.data) throw new Error('the bench event breaks the bench schema')
}

/** Sends a marker event and waits until it is stored: all before it is stored too. */
async function drained(server: Child): Promise<void> {
  const answer = await fetch(`${server.url}/e/k`, { method: 'POST', body: JSON.stringify(order(0)) })
  const { ids } = (await answer.json()) as { ids: string[] }
  while ((await fetch(`${server.url}/v1/events/${ids[0]}`)).status !== 200) await sleep(20)
}
