// What the ClickHouse stores promise beyond the shared contracts: hostile filter values
// find nothing and break nothing, 5000 events go in one INSERT, a retried batch changes no
// count, odd values round-trip, and the schema can be created again over itself, quietly.
import t, { type Test } from 'tap'
import pino from 'pino'
import type { StoredEvent } from '../../core/event.ts'
import { newUlid } from '../../core/ids.ts'
import type { RawWebhookRequest } from '../../core/raw-request.ts'
import { queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createClickHouseStores } from '../../store/clickhouse.ts'
import type { RunDoc } from '../../store/runs-types.ts'
import type { WebhookRequestRecord } from '../../store/requests-types.ts'
import { openTestDatabase, serverVersion, type TestDatabase } from '../helpers/clickhouse-db.ts'
import { HOSTILE_STRINGS } from '../helpers/hostile-strings.ts'
import { clickHouseServers } from '../infra/services.ts'
import { pollUntil } from '../infra/poll.ts'

function event(overrides: Partial<StoredEvent> = {}): StoredEvent {
  const internalId = overrides.internalId ?? newUlid()
  return {
    internalId,
    id: internalId,
    name: 'shop/order.placed',
    data: { total: 42 },
    ts: Date.now(),
    env: 'production',
    receivedAt: Date.now(),
    source: { kind: 'api' },
    ...overrides,
  }
}

function run(overrides: Partial<RunDoc> = {}): RunDoc {
  return {
    runId: newUlid(),
    functionId: 'shop-email',
    env: 'production',
    eventId: newUlid(),
    eventName: 'shop/order.placed',
    status: 'queued',
    attempts: 1,
    steps: [],
    queuedAt: Date.now(),
    version: 0,
    ...overrides,
  }
}

function requestRecord(webhookId: string, overrides: Partial<RawWebhookRequest> = {}): WebhookRequestRecord {
  const request: RawWebhookRequest = {
    requestId: newUlid(),
    webhookId,
    attempt: 1,
    receivedAt: Date.now(),
    ip: '192.0.2.7',
    headers: { 'Content-Type': 'application/json' },
    query: {},
    body: '{}',
    bodyEncoding: 'utf8',
    ...overrides,
  }
  return {
    request,
    status: 'failed',
    processedAt: Date.now(),
    env: null,
    eventIds: [],
    events: [],
    error: { code: 'TRANSFORM_THREW', message: 'boom' },
  }
}

async function scalar(db: TestDatabase, query: string): Promise<number> {
  const rows = await (await db.sql.query({ query, format: 'JSONEachRow' })).json<{ n: number | string }>()
  return Number(rows[0].n)
}

/** Waits for the database's ALTER … DELETE mutations to finish rewriting parts. */
async function mutationsDone(db: TestDatabase): Promise<void> {
  await pollUntil(
    async () =>
      (await scalar(
        db,
        `SELECT count() AS n FROM system.mutations WHERE database = '${db.database}' AND NOT is_done`,
      )) === 0,
    { what: 'mutations', timeoutMs: 30_000, intervalMs: 50 },
  )
}

// On both releases the store supports: Debian's 18.16 (values as literals) and a current
// one (values as query parameters).
for (const { url } of clickHouseServers()) {
  const version = await serverVersion(url)

  async function withDatabase(t: Test): Promise<TestDatabase> {
    const db = await openTestDatabase('sluice_test', url)
    t.teardown(() => db.close())
    return db
  }

  t.test(
    `ClickHouse ${version}: hostile values through every string filter find nothing and break nothing`,
    async (t) => {
      const db = await withDatabase(t)
      const { events, runs, requests } = db.stores
      const webhookId = 'wh_' + newUlid()
      const storedEvents = [event(), event({ id: 'order-1' }), event({ env: 'staging', name: 'shop/refund' })]
      const storedRuns = [run({ eventId: storedEvents[0].internalId }), run({ status: 'failed', version: 2 })]
      const storedRequests = [requestRecord(webhookId), requestRecord(webhookId)]
      await events.insertEvents(storedEvents)
      await runs.upsertRuns(storedRuns)
      await requests.record(storedRequests)
      const eventIds = storedEvents
        .map((e) => e.internalId)
        .sort()
        .reverse()
      const runIds = storedRuns
        .map((r) => r.runId)
        .sort()
        .reverse()

      for (const evil of HOSTILE_STRINGS) {
        const label = JSON.stringify(evil)
        t.equal(await events.getEvent(evil), null, `getEvent(${label})`)
        for (const filter of ['id', 'name', 'env'] as const) {
          t.same(
            (await events.queryEvents({ [filter]: evil, limit: 100, includeDuplicates: true })).events,
            [],
            `events ${filter}=${label}`,
          )
        }
        // A cursor is compared as a string: whatever it holds, the page is what that comparison gives.
        t.same(
          (await events.queryEvents({ cursor: evil, limit: 100 })).events.map((e) => e.internalId),
          eventIds.filter((id) => Buffer.compare(Buffer.from(id), Buffer.from(evil)) < 0),
          `events cursor=${label}`,
        )
        t.equal(await runs.getRun(evil), null, `getRun(${label})`)
        for (const filter of ['functionId', 'eventId', 'env'] as const) {
          t.same((await runs.queryRuns({ [filter]: evil, limit: 100 })).runs, [], `runs ${filter}=${label}`)
        }
        t.same(
          (await runs.queryRuns({ status: evil as RunDoc['status'], limit: 100 })).runs,
          [],
          `runs status=${label}`,
        )
        t.same(
          (await runs.queryRuns({ cursor: evil, limit: 100 })).runs.map((r) => r.runId),
          runIds.filter((id) => Buffer.compare(Buffer.from(id), Buffer.from(evil)) < 0),
          `runs cursor=${label}`,
        )
        t.equal(await requests.get(evil, storedRequests[0].request.requestId), null, `requests.get(webhook ${label})`)
        t.equal(await requests.get(webhookId, evil), null, `requests.get(request ${label})`)
        t.same((await requests.list({ webhookId: evil, limit: 100 })).requests, [], `requests webhookId=${label}`)
        t.same(
          (await requests.list({ webhookId, status: evil as 'failed', limit: 100 })).requests,
          [],
          `requests status=${label}`,
        )
        await requests.removeWebhook(evil)
      }

      t.same(
        (await events.queryEvents({ limit: 100 })).events.map((e) => e.internalId),
        eventIds,
        'every event still there',
      )
      t.same(
        (await runs.queryRuns({ limit: 100 })).runs.map((r) => r.runId),
        runIds,
        'every run still there',
      )
      await mutationsDone(db)
      t.equal(
        await scalar(db, `SELECT count() AS n FROM webhook_requests WHERE webhook_id = '${webhookId}'`),
        2,
        "deleting hostile webhook ids erased none of this webhook's rows",
      )
      t.equal((await requests.list({ webhookId, limit: 100 })).requests.length, 2, 'and hid none of them')
      t.equal(
        await scalar(db, `SELECT count() AS n FROM system.tables WHERE database = '${db.database}'`),
        10,
        'every table and view still there',
      )
    },
  )

  t.test(`ClickHouse ${version}: hostile strings stored as values are found by exactly themselves`, async (t) => {
    const db = await withDatabase(t)
    const stored = HOSTILE_STRINGS.map((s) => event({ id: s, name: s, env: s, data: { s } }))
    await db.stores.events.insertEvents(stored)
    for (const e of stored) {
      const label = JSON.stringify(e.name)
      t.same((await db.stores.events.queryEvents({ id: e.id, name: e.name, env: e.env, limit: 10 })).events, [e], label)
    }
  })

  t.test(
    `ClickHouse ${version}: 5000 events go in one INSERT and read back; a retried batch leaves every count unchanged`,
    async (t) => {
      const db = await withDatabase(t)
      const { events } = db.stores
      const name = `bulk/${newUlid()}`
      const batch = Array.from({ length: 5000 }, (_, i) =>
        event({ name, id: i % 10 === 0 ? `order-${i}` : undefined, data: { i } }),
      )
      for (const e of batch) if (e.id === undefined) e.id = e.internalId
      await events.insertEvents(batch)
      t.equal(
        await scalar(
          db,
          `SELECT count() AS n FROM system.parts WHERE database = '${db.database}' AND table = 'events' AND active`,
        ),
        1,
        'one INSERT, one part',
      )
      const all = await events.queryEvents({ name, limit: 10_000 })
      t.equal(all.events.length, 5000)
      t.same(
        all.events.map((e) => e.internalId),
        batch.map((e) => e.internalId).reverse(),
        'newest first',
      )

      await events.insertEvents(batch) // the store sink's batch, redelivered after a crash
      await events.insertEvents(batch.slice(1000, 3000)) // and part of it once more
      t.equal(await scalar(db, 'SELECT count() AS n FROM events'), 12_000, 'the copies are really there, unmerged')
      t.equal((await events.queryEvents({ name, limit: 10_000 })).events.length, 5000, 'listing counts each event once')
      t.equal((await events.queryEvents({ id: 'order-1000', limit: 10 })).events.length, 1, 'by dedup id, once')
      t.same(await events.getEvent(batch[1500].internalId), batch[1500], 'by internal id, once and equal')
      let paged = 0
      for (let cursor: string | null | undefined; cursor !== null; ) {
        const page = await events.queryEvents({ name, limit: 700, ...(cursor && { cursor }) })
        paged += page.events.length
        cursor = page.nextCursor
      }
      t.equal(paged, 5000, 'pages cover every event once')
      await db.sql.command({ query: 'OPTIMIZE TABLE events FINAL' })
      t.equal(await scalar(db, 'SELECT count() AS n FROM events'), 5000, 'a merge collapses the copies for good')
    },
  )

  t.test(`ClickHouse ${version}: retried run and request batches leave every count unchanged`, async (t) => {
    const db = await withDatabase(t)
    const { runs, requests } = db.stores
    const functionId = `fn-${newUlid()}`
    const latest = Array.from({ length: 300 }, () =>
      run({ functionId, status: 'completed', version: 4, startedAt: 1, endedAt: 2 }),
    )
    const older = latest.map((r) => ({ ...r, status: 'running' as const, version: 1 }))
    await runs.upsertRuns(latest)
    await runs.upsertRuns([...older, ...latest])
    await runs.upsertRuns(older)
    t.equal((await runs.queryRuns({ functionId, limit: 1000 })).runs.length, 300)
    t.equal(
      (await runs.queryRuns({ functionId, status: 'running', limit: 1000 })).runs.length,
      0,
      'older snapshots never show',
    )
    t.equal((await runs.queryRuns({ functionId, status: 'completed', limit: 1000 })).runs.length, 300)

    const webhookId = 'wh_' + newUlid()
    const records = Array.from({ length: 300 }, () => requestRecord(webhookId))
    await requests.record(records)
    await requests.record(records)
    t.equal((await requests.list({ webhookId, limit: 1000 })).requests.length, 300)
    t.equal((await requests.list({ webhookId, status: 'failed', limit: 1000 })).requests.length, 300)
  })

  t.test(`ClickHouse ${version}: concurrent small writes all land, joined into fewer INSERTs`, async (t) => {
    const db = await withDatabase(t)
    const name = `concurrent/${newUlid()}`
    const calls = Array.from({ length: 40 }, () => Array.from({ length: 5 }, () => event({ name })))
    await Promise.all(calls.map((batch) => db.stores.events.insertEvents(batch)))
    t.equal((await db.stores.events.queryEvents({ name, limit: 1000 })).events.length, 200)
    const parts = await scalar(
      db,
      `SELECT count() AS n FROM system.parts WHERE database = '${db.database}' AND table = 'events'`,
    )
    t.ok(parts < 40, `${parts} parts (active or merged away) for 40 calls`)
  })

  t.test(
    `ClickHouse ${version}: a deleted webhook's requests are hidden at once, erased by the mutation, and stay hidden if recorded late`,
    async (t) => {
      const db = await withDatabase(t)
      const gone = 'wh_' + newUlid()
      const kept = 'wh_' + newUlid()
      await db.stores.requests.record([requestRecord(gone), requestRecord(gone), requestRecord(kept)])
      await db.stores.requests.removeWebhook(gone)
      t.same((await db.stores.requests.list({ webhookId: gone, limit: 10 })).requests, [], 'hidden at once')
      await mutationsDone(db)
      t.equal(
        await scalar(db, `SELECT count() AS n FROM webhook_requests WHERE webhook_id = '${gone}'`),
        0,
        'erased from the table',
      )
      const late = requestRecord(gone)
      await db.stores.requests.record([late]) // an outcome still in flight when the webhook was deleted
      t.equal(
        await db.stores.requests.get(gone, late.request.requestId),
        null,
        'a late outcome of a deleted webhook stays hidden',
      )
      t.equal(
        (await db.stores.requests.list({ webhookId: kept, limit: 10 })).requests.length,
        1,
        'other webhooks untouched',
      )
    },
  )

  t.test(`ClickHouse ${version}: odd values round-trip exactly`, async (t) => {
    const db = await withDatabase(t)
    const odd = [
      event({ ts: 0, receivedAt: 0, data: {} }),
      event({ ts: Number.MAX_SAFE_INTEGER, data: { big: Number.MAX_SAFE_INTEGER, small: -1e-7, f: 0.1 } }),
      event({
        name: 'ü/ñ 😀\u0000\u0001\u001f',
        data: { s: 'line\nbreak\ttab "quoted" \\ back', lone: '\ud800', arr: [null, true, [[]], { '': '' }] },
      }),
      event({
        source: { kind: 'function', functionId: 'app-fn', runId: newUlid(), stepId: "step'1" },
        duplicateOf: newUlid(),
      }),
    ]
    await db.stores.events.insertEvents(odd)
    for (const e of odd) t.same(await db.stores.events.getEvent(e.internalId), e, e.name)
    const times = await (
      await db.sql.query({
        query: `SELECT toUInt32(event_time) AS t FROM events WHERE internal_id IN ('${odd[0].internalId}', '${odd[1].internalId}') ORDER BY ts`,
        format: 'JSONEachRow',
      })
    ).json<{ t: number }>()
    // Compared as numbers: 18.16 prints DateTime 0 as 0000-00-00 00:00:00, current releases as 1970-01-01.
    t.same(
      times.map((r) => r.t),
      [0, Date.UTC(2099, 11, 31, 23, 59, 59) / 1000],
      'event_time: the epoch, and a far-future ts clamped to the end of 2099',
    )
    const nullOutput = run({
      status: 'completed',
      output: null,
      version: 3,
      nextAttemptAt: 5,
      error: { name: 'Error', message: 'x', code: 'E' },
    })
    await db.stores.runs.upsertRuns([nullOutput])
    t.same(await db.stores.runs.getRun(nullOutput.runId), nullOutput, 'a null output is not an absent one')
    t.ok(Object.hasOwn((await db.stores.runs.getRun(nullOutput.runId))!, 'output'))
  })

  t.test(`ClickHouse ${version}: the schema can be created again over itself, keeping the data`, async (t) => {
    const db = await withDatabase(t)
    const e = event()
    await db.stores.events.insertEvents([e])
    const config = { url, database: db.database, limits: queryLimits(DEFAULTS) }
    // A restart logs no error for work that succeeded: the client prints a refused statement (an
    // ADD COLUMN of a column there already) at ERROR through console.error.
    const printed: string[] = []
    const { error, warn } = console
    console.error = (...args: unknown[]) => printed.push(args.map(String).join(' '))
    console.warn = console.error
    const again = await createClickHouseStores(config, pino({ level: 'silent' })).finally(() => {
      console.error = error
      console.warn = warn
    })
    t.teardown(() => again.close())
    t.same(printed, [], 'nothing printed at warn or error')
    t.same(await again.events.getEvent(e.internalId), e)
  })
}

t.test('a database name that is not a plain identifier is refused before connecting', async (t) => {
  await t.rejects(
    createClickHouseStores(
      { url: 'http://127.0.0.1:1', database: 'x; DROP DATABASE default', limits: queryLimits(DEFAULTS) },
      pino({ level: 'silent' }),
    ),
    RangeError,
  )
})
