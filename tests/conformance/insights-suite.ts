// The InsightsStore contract, run against every adapter: the embedded store's indexes and
// ClickHouse (18.16 and current). Records go in through the stores the pipeline writes with,
// and the counts come back the same from both.
import type { Test } from 'tap'
import type { StoredEvent } from '../../core/event.ts'
import { newIdSeed, seededUlids } from '../../core/ids.ts'
import type { InsightsStore } from '../../store/insights-types.ts'
import type { WebhookRequestRecord, WebhookRequestStore } from '../../store/requests-types.ts'
import type { RunDoc, RunStore } from '../../store/runs-types.ts'
import type { EventStore } from '../../store/types.ts'

export interface InsightsFixture {
  insights: InsightsStore
  events: EventStore
  runs: RunStore
  requests: WebhookRequestStore
  close(): Promise<void>
}

const MINUTE = 60_000
/** An hour boundary two hours ago: every record of a test lies in the hour after it. */
const T = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000
let serial = 0
/** A ULID of time `ms`, distinct from every other one made here. */
const idAt = (ms: number) => seededUlids(newIdSeed(ms), 1)[0]

function event(name: string, receivedAt: number, overrides: Partial<StoredEvent> = {}): StoredEvent {
  const internalId = overrides.internalId ?? idAt(receivedAt)
  return {
    internalId,
    id: `e-${++serial}`,
    name,
    data: { n: serial },
    ts: receivedAt,
    env: 'production',
    receivedAt,
    source: { kind: 'api' },
    ...overrides,
  }
}

function run(functionId: string, status: RunDoc['status'], queuedAt: number, env = 'production'): RunDoc {
  return {
    runId: idAt(queuedAt),
    functionId,
    env,
    eventId: idAt(queuedAt),
    eventName: 'app/x',
    status,
    attempts: 1,
    steps: [],
    queuedAt,
    version: 1,
  }
}

function request(webhookId: string, receivedAt: number, status: WebhookRequestRecord['status'], code?: string) {
  return {
    request: {
      requestId: idAt(receivedAt),
      webhookId,
      attempt: 1,
      receivedAt,
      ip: '192.0.2.1',
      headers: {},
      query: {},
      body: '{}',
      bodyEncoding: 'utf8',
    },
    status,
    processedAt: receivedAt,
    env: status === 'delivered' ? 'production' : null,
    eventIds: [],
    events: [],
    error: code ? { code, message: 'x' } : null,
  } satisfies WebhookRequestRecord
}

export function insightsSuite(t: Test, name: string, open: () => Promise<InsightsFixture>): void {
  t.test(`${name}: events per bucket by name, the top names and the rest summed, by receive time`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const at = (minute: number, second = 0) => T + minute * MINUTE + second * 1000
    await f.events.insertEvents([
      event('a', at(0)),
      event('a', at(0, 59)),
      event('a', at(2)),
      event('b', at(1)),
      event('b', at(2, 30)),
      event('c', at(2)),
      event('d', at(3)),
      // Not counted: a duplicate, another environment, outside the range (before, and at its end).
      event('a', at(1), { duplicateOf: idAt(at(0)) }),
      event('a', at(1), { env: 'staging' }),
      event('a', at(-1)),
      event('a', at(5)),
      // Counted by its receive time, though its ID is from hours before (a client's ID seed).
      event('b', at(3, 10), { internalId: idAt(T - 3 * 3_600_000) }),
    ])
    const counts = await f.insights.eventCounts({
      from: at(0),
      to: at(5),
      env: 'production',
      bucketMs: MINUTE,
      top: 2,
    })
    t.same(
      counts.buckets,
      [0, 1, 2, 3, 4].map((m) => at(m)),
    )
    t.same(
      counts.series,
      [
        { name: 'a', total: 3, counts: [2, 0, 1, 0, 0] },
        { name: 'b', total: 3, counts: [0, 1, 1, 1, 0] },
      ],
      'the two most frequent names (ties by name), each minute',
    )
    t.same(counts.other, { total: 2, counts: [0, 0, 1, 1, 0] }, 'c and d summed')
    t.equal(counts.truncated, false)

    const all = await f.insights.eventCounts({ from: at(0), to: at(5), bucketMs: 5 * MINUTE, top: 5 })
    t.same(
      all.series.map((s) => [s.name, s.total]),
      [
        ['a', 4],
        ['b', 3],
        ['c', 1],
        ['d', 1],
      ],
      'every environment: the staging event counts too; one bucket of five minutes',
    )
    t.equal(all.other, null, 'no other names')
    const one = await f.insights.eventCounts({
      from: at(0),
      to: at(5),
      env: 'production',
      name: 'b',
      bucketMs: MINUTE,
      top: 5,
    })
    t.same(one.series, [{ name: 'b', total: 3, counts: [0, 1, 1, 1, 0] }], 'one name')
    const none = await f.insights.eventCounts({ from: at(30), to: at(40), bucketMs: MINUTE, top: 5 })
    t.same([none.series, none.other, none.buckets.length], [[], null, 10], 'an empty range has empty buckets')
  })

  t.test(`${name}: schema violations of one name per bucket, with the latest samples newest first`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const at = (minute: number, second = 0) => T + minute * MINUTE + second * 1000
    const broken = (minute: number, second = 0, overrides: Partial<StoredEvent> = {}) =>
      event('shop/order.placed', at(minute, second), {
        schemaViolations: [`data/amount: must be number`],
        ...overrides,
      })
    const latest = broken(3, 30, { schemaViolations: ['data/amount: must be number', 'data/x: is required'] })
    const second = broken(2)
    await f.events.insertEvents([
      broken(0, 10),
      broken(0, 50),
      second,
      latest,
      event('shop/order.placed', at(1)), // valid: not counted
      // Not counted: a duplicate, another name, another environment, outside the range.
      broken(1, 0, { duplicateOf: idAt(at(0)) }),
      event('shop/other', at(1), { schemaViolations: ['data/a: must be string'] }),
      broken(1, 0, { env: 'staging' }),
      broken(-1),
      broken(5),
    ])
    const q = { from: at(0), to: at(5), env: 'production', name: 'shop/order.placed', bucketMs: MINUTE, samples: 2 }
    const found = await f.insights.schemaViolations(q)
    t.same(
      found.buckets,
      [0, 1, 2, 3, 4].map((m) => at(m)),
    )
    t.same(found.counts, [2, 0, 1, 1, 0])
    t.equal(found.total, 4)
    t.same(
      found.samples,
      [
        { id: latest.id, internalId: latest.internalId, receivedAt: at(3, 30), violations: latest.schemaViolations },
        {
          id: second.id,
          internalId: second.internalId,
          receivedAt: at(2),
          violations: ['data/amount: must be number'],
        },
      ],
      'the latest two, newest first',
    )
    t.equal(found.truncated, false)
    const none = await f.insights.schemaViolations({ ...q, name: 'shop/none' })
    t.same([none.total, none.counts, none.samples], [0, [0, 0, 0, 0, 0], []], 'a name without violations counts 0')
  })

  t.test(`${name}: run outcomes by function and status, by queue time and environment`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const at = (minute: number) => T + minute * MINUTE
    await f.runs.upsertRuns([
      run('shop-checkout', 'completed', at(1)),
      run('shop-checkout', 'completed', at(2)),
      run('shop-checkout', 'failed', at(3)),
      run('mail-send', 'queued', at(4)),
      run('mail-send', 'completed', at(4), 'staging'),
      run('mail-send', 'completed', at(70)),
    ])
    // A run's newest snapshot counts: this one failed, then completed on retry.
    const retried = run('mail-send', 'failed', at(5))
    await f.runs.upsertRuns([retried])
    await f.runs.upsertRuns([{ ...retried, status: 'completed', version: 2 }])
    const { rows, truncated } = await f.insights.runOutcomes({ from: at(0), to: at(60), env: 'production' })
    t.same(rows, [
      { functionId: 'mail-send', status: 'completed', count: 1 },
      { functionId: 'mail-send', status: 'queued', count: 1 },
      { functionId: 'shop-checkout', status: 'completed', count: 2 },
      { functionId: 'shop-checkout', status: 'failed', count: 1 },
    ])
    t.equal(truncated, false)
    const everywhere = await f.insights.runOutcomes({ from: at(0), to: at(60) })
    t.same(
      everywhere.rows.find((r) => r.functionId === 'mail-send' && r.status === 'completed'),
      { functionId: 'mail-send', status: 'completed', count: 2 },
      'every environment',
    )
  })

  t.test(`${name}: failed webhook requests by webhook and code, of the webhooks asked about`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const at = (minute: number) => T + minute * MINUTE
    await f.requests.record([
      request('wh_a', at(1), 'failed', 'TRANSFORM_THREW'),
      request('wh_a', at(2), 'failed', 'TRANSFORM_THREW'),
      request('wh_a', at(3), 'failed', 'SIGNATURE_INVALID'),
      request('wh_a', at(4), 'delivered'),
      request('wh_b', at(5), 'failed', 'TRANSFORM_TIMEOUT'),
      request('wh_c', at(5), 'failed', 'TRANSFORM_THREW'),
      request('wh_a', at(90), 'failed', 'TRANSFORM_THREW'),
    ])
    // A failed request replayed successfully is no longer a failure.
    const replayed = request('wh_b', at(6), 'failed', 'TRANSFORM_THREW')
    await f.requests.record([replayed])
    await f.requests.record([
      { ...replayed, request: { ...replayed.request, attempt: 2 }, status: 'delivered', error: null },
    ])
    const { rows, truncated } = await f.insights.webhookFailures({
      from: at(0),
      to: at(60),
      webhookIds: ['wh_a', 'wh_b'],
    })
    t.same(rows, [
      { webhookId: 'wh_a', code: 'TRANSFORM_THREW', count: 2 },
      { webhookId: 'wh_a', code: 'SIGNATURE_INVALID', count: 1 },
      { webhookId: 'wh_b', code: 'TRANSFORM_TIMEOUT', count: 1 },
    ])
    t.equal(truncated, false)
    t.same(
      (await f.insights.webhookFailures({ from: at(0), to: at(60), webhookIds: [] })).rows,
      [],
      'no webhooks, no rows',
    )
  })
}
