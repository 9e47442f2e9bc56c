// Keeps docs/clickhouse.md true: its DDL is exactly what the store runs, and every example
// query runs on real servers, 18.16 and current, against data written through the stores, with results.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import type { StoredEvent } from '../core/event.ts'
import { newUlid } from '../core/ids.ts'
import type { RunDoc } from '../store/runs-types.ts'
import type { WebhookRequestRecord } from '../store/requests-types.ts'
import { schemaStatements } from '../store/clickhouse-schema.ts'
import { openTestDatabase, serverVersion, type TestDatabase } from './helpers/clickhouse-db.ts'
import { clickHouseServers } from './infra/services.ts'

interface SqlBlock {
  heading: string
  sql: string
}

function sqlBlocks(markdown: string): SqlBlock[] {
  const blocks: SqlBlock[] = []
  let heading = ''
  let open: string[] | undefined
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.trim() === '```') {
        blocks.push({ heading, sql: open.join('\n').trim() })
        open = undefined
      } else {
        open.push(line)
      }
    } else if (line.trim() === '```sql') {
      open = []
    } else if (/^#+ /.test(line)) {
      heading = line.replace(/^#+ /, '').trim()
    }
  }
  return blocks
}

const statementsOf = (sql: string) =>
  sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean)

const blocks = sqlBlocks(await readFile(new URL('../docs/clickhouse.md', import.meta.url), 'utf8'))
const ddl = blocks.filter((b) => /^(CREATE|ALTER)\b/.test(b.sql))
const examples = blocks.filter((b) => /^SELECT\b/.test(b.sql))

t.test('the documented DDL is the schema the store creates, statement for statement', async (t) => {
  t.same(
    ddl.flatMap((b) => statementsOf(b.sql)),
    schemaStatements('sluice'),
  )
})

t.test('the doc has 6 to 8 example queries and every sql block is DDL or one', async (t) => {
  t.ok(examples.length >= 6 && examples.length <= 8, `${examples.length} examples`)
  t.equal(ddl.length + examples.length, blocks.length)
})

const now = Date.now()
const ms = (minutesAgo: number) => now - minutesAgo * 60_000

function event(
  name: string,
  data: Record<string, unknown>,
  minutesAgo: number,
  overrides: Partial<StoredEvent> = {},
): StoredEvent {
  const internalId = newUlid()
  return {
    internalId,
    id: internalId,
    name,
    env: 'production',
    data,
    ts: ms(minutesAgo),
    receivedAt: ms(minutesAgo),
    source: { kind: 'api' },
    ...overrides,
  }
}

function run(
  functionId: string,
  status: RunDoc['status'],
  durationMs: number,
  minutesAgo: number,
  eventId: string,
  error?: string,
): RunDoc {
  const queuedAt = ms(minutesAgo)
  return {
    runId: newUlid(),
    functionId,
    env: 'production',
    eventId,
    eventName: 'shop/order.placed',
    status,
    attempts: error ? 4 : 1,
    steps: [],
    queuedAt,
    startedAt: queuedAt + 5,
    endedAt: queuedAt + 5 + durationMs,
    version: 6,
    ...(error ? { error: { name: 'Error', message: error } } : { output: { ok: true } }),
  }
}

function webhookRequest(
  webhookId: string,
  status: WebhookRequestRecord['status'],
  minutesAgo: number,
): WebhookRequestRecord {
  return {
    request: {
      requestId: newUlid(),
      webhookId,
      attempt: 1,
      receivedAt: ms(minutesAgo),
      ip: '192.0.2.1',
      headers: { 'X-Github-Event': 'push' },
      query: {},
      body: '{}',
      bodyEncoding: 'utf8',
    },
    status,
    processedAt: ms(minutesAgo) + 20,
    env: status === 'delivered' ? 'production' : null,
    eventIds: status === 'delivered' ? [newUlid()] : [],
    events: [],
    error: status === 'failed' ? { code: 'TRANSFORM_THREW', message: 'TypeError: x is undefined' } : null,
  }
}

/** A small, plausible shop: orders on two plans, a duplicate, runs that pass and fail, two webhooks. */
async function seed(db: TestDatabase) {
  const orders = Array.from({ length: 12 }, (_, i) =>
    event(
      'shop/order.placed',
      { plan: i % 3 ? 'pro' : 'free', total: 10 + i, customer: { country: i % 2 ? 'FR' : 'DE' } },
      i * 10,
      { id: `order-${i}` },
    ),
  )
  const duplicate = {
    ...event('shop/order.placed', orders[0].data, 1, { id: orders[0].id }),
    duplicateOf: orders[0].internalId,
  }
  const signups = Array.from({ length: 5 }, (_, i) => event('user/signed.up', { plan: 'free' }, i * 30))
  await db.stores.events.insertEvents([...orders, duplicate, ...signups])
  await db.stores.runs.upsertRuns([
    ...orders.map((o, i) => run('shop-send-receipt', 'completed', 40 + i * 7, i * 10, o.internalId)),
    ...orders
      .slice(0, 4)
      .map((o, i) =>
        run(
          'shop-charge',
          i === 0 ? 'failed' : 'completed',
          300 + i * 50,
          i * 10,
          o.internalId,
          i === 0 ? 'card declined' : undefined,
        ),
      ),
  ])
  await db.stores.requests.record([
    ...Array.from({ length: 6 }, (_, i) => webhookRequest('wh_github', i < 2 ? 'failed' : 'delivered', i * 5)),
    ...Array.from({ length: 3 }, (_, i) => webhookRequest('wh_stripe', 'delivered', i * 5)),
  ])
  return { orders, duplicate }
}

// On both releases the store supports, as the doc claims: Debian's 18.16 and a current one.
for (const { url } of clickHouseServers()) {
  const version = await serverVersion(url)

  t.test(`ClickHouse ${version}: every example query runs on the real server and returns rows`, async (t) => {
    const db = await openTestDatabase('sluice_docs', url)
    t.teardown(() => db.close())
    const { orders, duplicate } = await seed(db)
    const results = new Map<string, Array<Record<string, unknown>>>()
    for (const { heading, sql } of examples) {
      const result = await db.sql.query({ query: sql.replace(/;\s*$/, ''), format: 'JSONEachRow' })
      const rows = await result.json<Record<string, unknown>>()
      t.ok(rows.length > 0, `${heading}: ${rows.length} rows`)
      results.set(heading, rows)
    }
    const find = (word: string) =>
      [...results.entries()].find(([heading]) => heading.toLowerCase().includes(word))?.[1] ?? []
    t.same(
      find('deduplicated').map((r) => [r.dropped, r.original]),
      [[duplicate.internalId, orders[0].internalId]],
      'the duplicate and the event it repeats',
    )
    const github = find('failure').find((r) => r.webhook_id === 'wh_github')
    t.equal(Number(github?.failure_rate), 0.333, 'wh_github: 2 of 6 failed')
    const proRevenue = find('json')
      .filter((r) => r.plan === 'pro')
      .reduce((sum, r) => sum + Number(r.revenue), 0)
    t.equal(
      proRevenue,
      orders.filter((o) => o.data.plan === 'pro').reduce((sum, o) => sum + (o.data.total as number), 0),
      'revenue of the pro plan, duplicate left out',
    )
  })
}
