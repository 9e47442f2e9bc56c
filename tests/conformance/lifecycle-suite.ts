// Retention per environment and erasure, run against every store (the real RocksDB; ClickHouse
// 18.16 and a current release): what each environment keeps stays readable by every query, and
// nothing else is left.
import type { Test } from 'tap'
import type { StoredEvent } from '../../core/event.ts'
import { newIdSeed, seededUlids } from '../../core/ids.ts'
import type { EnvDoc } from '../../control/types.ts'
import { retentionPlan } from '../../control/retention.ts'
import type { ErasureBatch, ErasureStore, ErasureTarget } from '../../store/erasure-types.ts'
import type { RetentionStore } from '../../store/retention-types.ts'
import type { WebhookRequestRecord, WebhookRequestStore } from '../../store/requests-types.ts'
import type { RunDoc, RunStore } from '../../store/runs-types.ts'
import type { EventStore } from '../../store/types.ts'

export interface LifecycleFixture {
  events: EventStore
  runs: RunStore
  requests: WebhookRequestStore
  retention: RetentionStore
  erasure: ErasureStore
  /** Resolves once the deletions a pass started are done (ClickHouse's mutations). */
  settle(): Promise<void>
  close(): Promise<void>
}

const DAY = 24 * 60 * 60_000
const NOW = Date.now()

let made = 0
function eventAt(ms: number, env: string, overrides: Partial<StoredEvent> = {}): StoredEvent {
  const [internalId] = seededUlids(newIdSeed(ms), 1)
  made++
  return {
    internalId,
    id: `order-${made}`,
    name: `life/e${made % 2}`,
    data: { n: made },
    ts: ms,
    env,
    receivedAt: ms,
    source: { kind: 'api' },
    ...overrides,
  }
}

function runOf(event: StoredEvent, overrides: Partial<RunDoc> = {}): RunDoc {
  return {
    runId: seededUlids(newIdSeed(event.receivedAt), 1)[0],
    functionId: 'app-fn',
    env: event.env,
    eventId: event.internalId,
    eventName: event.name,
    status: 'completed',
    attempts: 1,
    steps: [{ id: 'load', status: 'completed', output: event.data } as RunDoc['steps'][number]],
    queuedAt: event.receivedAt,
    version: 1,
    ...overrides,
  }
}

function requestAt(ms: number, env: string | null, webhookId = 'wh_life'): WebhookRequestRecord {
  return {
    request: {
      requestId: seededUlids(newIdSeed(ms), 1)[0],
      webhookId,
      attempt: 1,
      receivedAt: ms,
      ip: '192.0.2.1',
      headers: {},
      query: {},
      body: '{"user":{"id":"u-1"}}',
      bodyEncoding: 'utf8',
    },
    status: env === null ? 'failed' : 'delivered',
    processedAt: ms,
    env,
    eventIds: [],
    events: [],
    error: env === null ? { code: 'TRANSFORM_THREW', message: 'x' } : null,
  }
}

const env = (name: string, retentionDays?: EnvDoc['retentionDays']): EnvDoc => ({
  name,
  kind: 'standard',
  createdAt: 0,
  ...(retentionDays && { retentionDays }),
})

export function lifecycleSuite(t: Test, name: string, open: () => Promise<LifecycleFixture>): void {
  t.test(`${name}: each environment keeps its events, runs and requests as long as it says`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const ages = [0, 2, 15, 40].map((days) => NOW - days * DAY - 5_000)
    const byEnv = Object.fromEntries(
      ['short', 'long', 'production'].map((e) => [e, ages.map((at) => eventAt(at, e))] as const),
    )
    // One write whose events share a millisecond, two environments: one goes, one stays.
    const shared = NOW - 3 * DAY
    const [a, b] = seededUlids(newIdSeed(shared), 2)
    const mixed = [eventAt(shared, 'short', { internalId: a }), eventAt(shared, 'production', { internalId: b })]
    await f.events.insertEvents([...Object.values(byEnv).flat(), ...mixed])
    const runs = [runOf(byEnv.short[1]), runOf(byEnv.production[1]), runOf(byEnv.production[3])]
    await f.runs.upsertRuns(runs)
    const requests = [requestAt(ages[1], 'short'), requestAt(ages[1], 'production'), requestAt(ages[1] + 1, null)]
    await f.requests.record(requests)

    const envs = [env('short', { events: 1, runs: 1, requests: 1 }), env('long', { events: 30 })]
    await f.retention.expire(retentionPlan(envs, { events: 10 * DAY, runs: 0, requests: 0 }, NOW), {
      sweepIds: true,
    })
    await f.settle()

    const ids = async (e: string) =>
      (await f.events.queryEvents({ env: e, limit: 100, includeDuplicates: true })).events.map((x) => x.internalId)
    const kept = (events: StoredEvent[], n: number) => events.slice(0, n).map((e) => e.internalId)
    t.same(await ids('short'), kept(byEnv.short, 1), 'short (1 day): the fresh event only')
    t.same(await ids('long'), kept(byEnv.long, 3), 'long (30 days): all but the 40-day-old one')
    t.same(
      (await ids('production')).sort(),
      [...kept(byEnv.production, 2), b].sort(),
      'production (the default, 10 days): fresh, 2 days, and its event sharing a value with a removed one',
    )
    t.equal(await f.events.getEvent(a), null, "short's event of the shared millisecond is gone")
    t.same((await f.events.getEvent(b))?.data, mixed[1].data, "production's reads back whole")
    const byName = await f.events.queryEvents({ name: mixed[1].name, env: 'production', limit: 100 })
    t.ok(
      byName.events.some((e) => e.internalId === b),
      'and is found by env and name',
    )
    const byDedupId = await f.events.queryEvents({ id: mixed[1].id, limit: 10 })
    t.same(
      byDedupId.events.map((e) => e.internalId),
      [b],
      'and by its dedup id',
    )
    t.same((await f.events.queryEvents({ id: byEnv.short[1].id, limit: 10 })).events, [], 'a removed one is not')

    t.equal(await f.runs.getRun(runs[0].runId), null, "short's 2-day-old run is gone")
    t.ok(await f.runs.getRun(runs[1].runId), 'production keeps its runs (the default keeps them)')
    t.ok(await f.runs.getRun(runs[2].runId), 'even 40 days old')
    t.same((await f.runs.queryRuns({ eventId: byEnv.short[1].internalId, limit: 10 })).runs, [], 'not by its event')
    const request = (r: WebhookRequestRecord) => f.requests.get(r.request.webhookId, r.request.requestId)
    t.equal(await request(requests[0]), null, "short's request is gone")
    t.ok(await request(requests[1]), "production's stays")
    t.ok(await request(requests[2]), 'a failed one (no environment) takes the default: kept')
  })

  t.test(`${name}: an erasure deletes the matching events, their runs and requests, and nothing else`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const at = NOW - 60_000
    const hook = requestAt(at, 'production', 'wh_erase')
    const source = { kind: 'webhook' as const, webhookId: 'wh_erase', requestId: hook.request.requestId }
    const person = { user: { id: 'u-1', email: 'a@example.com' } }
    const [w, x, y, z] = seededUlids(newIdSeed(at), 4)
    const matching = [
      eventAt(at, 'production', { internalId: w, data: person, source }),
      eventAt(at, 'production', { internalId: x, data: { ...person, more: 1 } }),
      eventAt(at - 1000, 'production', { data: person }),
    ]
    const others = [
      eventAt(at, 'production', { internalId: y, data: { user: { id: 'u-2' } } }),
      eventAt(at, 'production', { internalId: z, data: { user: 'u-1', note: '"u-1"' } }),
      eventAt(at, 'staging', { data: person }),
      eventAt(at - 2000, 'production', { data: { user: { id: 1 } } }),
    ]
    await f.events.insertEvents([...matching, ...others])
    const runs = [runOf(matching[0]), runOf(matching[1], { runId: seededUlids(newIdSeed(at + 1), 1)[0] })]
    const otherRun = runOf(others[0], { runId: seededUlids(newIdSeed(at + 2), 1)[0] })
    await f.runs.upsertRuns([...runs, otherRun])
    await f.requests.record([hook])

    const target: ErasureTarget = { env: 'production', path: ['user', 'id'], value: 'u-1' }
    const erased: ErasureBatch = { events: [], runs: [], requests: [] }
    let cursor: string | null = null
    do {
      const page = await f.erasure.find(target, 2, cursor)
      await f.erasure.erase(page.batch)
      erased.events.push(...page.batch.events)
      erased.runs.push(...page.batch.runs)
      erased.requests.push(...page.batch.requests)
      cursor = page.next
    } while (cursor !== null)
    t.same(erased.events.sort(), matching.map((e) => e.internalId).sort(), 'found every matching event, once')
    t.same(erased.runs.sort(), runs.map((r) => r.runId).sort(), 'and the runs they triggered')
    t.same(erased.requests, [{ webhookId: 'wh_erase', requestId: hook.request.requestId }], 'and their request')
    for (const e of matching) t.equal(await f.events.getEvent(e.internalId), null, `event ${e.internalId} is gone`)
    for (const r of runs) t.equal(await f.runs.getRun(r.runId), null, 'its run is gone')
    t.equal(await f.requests.get('wh_erase', hook.request.requestId), null, 'its raw request is gone')
    for (const e of others) t.ok(await f.events.getEvent(e.internalId), `${JSON.stringify(e.data)} in ${e.env} stays`)
    t.ok(await f.runs.getRun(otherRun.runId), "another event's run stays")
    const listed = await f.events.queryEvents({ env: 'production', limit: 100 })
    t.same(
      listed.events.map((e) => e.internalId).sort(),
      others
        .filter((e) => e.env === 'production')
        .map((e) => e.internalId)
        .sort(),
    )

    const again = await f.erasure.find(target, 100, null)
    t.same(again.batch, { events: [], runs: [], requests: [] }, 'a second search finds nothing')
    await f.erasure.erase({
      events: matching.map((e) => e.internalId),
      runs: runs.map((r) => r.runId),
      requests: erased.requests,
    })
    t.ok(await f.events.getEvent(y), 'erasing the same again changes nothing')
  })
}
