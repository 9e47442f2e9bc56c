// bench/ingest/schema: the CPU the schema check adds to the Event API per event (control/schema-check.ts),
// on bench/ingest's order event and a realistic schema of it, as ingest calls it: once per request,
// for single events and for 500-event batches; block mode (every event valid, so all are checked).
// Without a schema (mode off) the check returns before looking at an event: that row is the floor.
// Usage: node --conditions=sluice-source bench/ingest/schema.ts [iterations]
import { createSchemaCheck } from '../../control/schema-check.ts'
import { createSchemas } from '../../control/schemas.ts'
import type { ControlDocs, ControlKind, ControlStore, EnvDoc } from '../../control/types.ts'
import { report } from '../lib.ts'
import { event } from './events.ts'

const iterations = Number(process.argv[2] ?? 200_000)

/** The control store in memory: what every node holds (ControlStore's reads are synchronous). */
function memoryControl(): ControlStore {
  const docs = new Map<string, unknown>()
  return {
    get: <K extends ControlKind>(kind: K, id: string) => docs.get(`${kind}\0${id}`) as ControlDocs[K] | undefined,
    list: <K extends ControlKind>(kind: K) =>
      [...docs.entries()].filter(([k]) => k.startsWith(`${kind}\0`)).map(([, v]) => v) as Array<ControlDocs[K]>,
    put: async (kind, id, doc) => void docs.set(`${kind}\0${id}`, doc),
    async putIf(kind, id, doc, expected) {
      if (docs.get(`${kind}\0${id}`) !== expected) return false
      docs.set(`${kind}\0${id}`, doc)
      return true
    },
    delete: async (kind, id) => void docs.delete(`${kind}\0${id}`),
    close: async () => {},
  }
}

const ORDER_SCHEMA = {
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
  },
  required: ['orderId', 'amount', 'currency'],
  additionalProperties: false,
}

const production: EnvDoc = { name: 'production', kind: 'standard', createdAt: 0 }
const schemas = createSchemas(memoryControl(), { get: () => production }, { maxNameLength: 256 })
await schemas.push('production', 'bench/order.created', ORDER_SCHEMA)
const check = createSchemaCheck(schemas, { inherited: (env) => env })
const where = (i: number) => `events[${i}]`

function nsPerEvent(env: EnvDoc, batch: ReturnType<typeof event>[], calls: number): number {
  for (let i = 0; i < Math.min(calls, 1000); i++) check(env, batch, where) // warm-up: compile and JIT
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) if (check(env, batch, where).kind !== 'ok') throw new Error('refused')
  return Number(process.hrtime.bigint() - start) / (calls * batch.length)
}

const single = [event(1)]
const batch = Array.from({ length: 500 }, (_, i) => event(i))
const rows: Array<Record<string, string | number>> = []
for (const run of [1, 2]) {
  for (const [mode, env] of [
    ['off (no schema check)', production],
    ['block, schema', { ...production, schemaMode: 'block' as const }],
  ] as const) {
    rows.push({ run, mode, case: 'single', 'ns/event': Math.round(nsPerEvent(env, single, iterations)) })
    const calls = Math.max(1, Math.round(iterations / 500))
    rows.push({ run, mode, case: '500-event batch', 'ns/event': Math.round(nsPerEvent(env, batch, calls)) })
  }
}
report('ingest-schema-check', rows, { iterations })
