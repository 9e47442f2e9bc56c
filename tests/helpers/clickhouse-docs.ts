// docs/clickhouse.md's SQL blocks and a small shop to run its example queries on: shared by the doc's
// own test (tests/docs-clickhouse.test.ts, one server of each release) and the cluster's
// (tests/store/clickhouse-cluster.test.ts, the same answers on a cluster as on one server).
import type { Test } from 'tap'
import { readFileSync } from 'node:fs'
import type { StoredEvent } from '../../core/event.ts'
import { newUlid } from '../../core/ids.ts'
import type { RunDoc } from '../../store/runs-types.ts'
import type { WebhookRequestRecord } from '../../store/requests-types.ts'
import type { TestDatabase } from './clickhouse-db.ts'

export interface SqlBlock {
  heading: string
  sql: string
}

export function sqlBlocks(markdown: string): SqlBlock[] {
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

export const statementsOf = (sql: string) =>
  sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean)

/** The doc's blocks: its DDL and its example queries. */
export function docBlocks() {
  const blocks = sqlBlocks(readFileSync(new URL('../../docs/clickhouse.md', import.meta.url), 'utf8'))
  return {
    blocks,
    ddl: blocks.filter((b) => /^(CREATE|ALTER)\b/.test(b.sql)),
    examples: blocks.filter((b) => /^SELECT\b/.test(b.sql)),
  }
}

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
export function shopData() {
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
  const events = [...orders, duplicate, ...signups]
  const runs = [
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
  ]
  const requests = [
    ...Array.from({ length: 6 }, (_, i) => webhookRequest('wh_github', i < 2 ? 'failed' : 'delivered', i * 5)),
    ...Array.from({ length: 3 }, (_, i) => webhookRequest('wh_stripe', 'delivered', i * 5)),
  ]
  return { orders, duplicate, events, runs, requests }
}

export type ShopData = ReturnType<typeof shopData>

export async function seedShop(db: TestDatabase, data: ShopData = shopData()): Promise<ShopData> {
  await db.stores.events.insertEvents(data.events)
  await db.stores.runs.upsertRuns(data.runs)
  await db.stores.requests.record(data.requests)
  return data
}

/** Every example query of the doc on `db`, by heading. */
export async function runExamples(db: TestDatabase): Promise<Map<string, Array<Record<string, unknown>>>> {
  const results = new Map<string, Array<Record<string, unknown>>>()
  for (const { heading, sql } of docBlocks().examples) {
    const result = await db.sql.query({ query: sql.replace(/;\s*$/, ''), format: 'JSONEachRow' })
    results.set(heading, await result.json<Record<string, unknown>>())
  }
  return results
}

/** The answers the seeded shop must give, checked on any server or cluster. */
export function checkShopAnswers(t: Test, results: Map<string, Array<Record<string, unknown>>>, data: ShopData) {
  const { orders, duplicate } = data
  for (const [heading, rows] of results) t.ok(rows.length > 0, `${heading}: ${rows.length} rows`)
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
}
