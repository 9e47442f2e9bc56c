// Retention of the embedded event store (SLUICE_EVENT_RETENTION_MS, store/rocksdb-retention.ts):
// what is older goes from the store and every index, what is newer answers every query as if the
// older events had never been stored; and `sluice dev` runs it on its own.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { loadConfig, rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import type { StoredEvent } from '../../core/event.ts'
import { newIdSeed, seededUlids } from '../../core/ids.ts'
import { KEY_SPACES, keyRange } from '../../core/keyspaces.ts'
import { openRocks, type Rocks } from '../../core/rocks.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { ulidFloor } from '../../store/rocksdb-index.ts'
import type { EventQuery, EventStore } from '../../store/types.ts'
import { eventually, getJson, postJson, removeDir, startServer, tempDir } from '../helpers/server.ts'
import { scrape } from '../ops/metrics-scrape.ts'

const BASE = Date.UTC(2026, 0, 1)
const STEP_MS = 1000
const CUTOFF = BASE + 300 * STEP_MS

/** Event i of a seed's IDs; received at its ID's time unless `receivedAt` says otherwise. */
function event(id: string, i: number, overrides: Partial<StoredEvent> = {}): StoredEvent {
  return {
    internalId: id,
    id,
    name: `app/e${i % 7}`,
    data: { i },
    ts: BASE,
    env: i % 3 === 0 ? 'staging' : 'production',
    receivedAt: BASE + i * STEP_MS,
    source: { kind: 'api' },
    ...overrides,
  }
}

/** 600 events a second apart, some with caller ids (two share one: a duplicate), and requests whose events share a millisecond. */
function events(): StoredEvent[] {
  const all: StoredEvent[] = []
  for (let i = 0; i < 600; i++) {
    const [id] = seededUlids(newIdSeed(BASE + i * STEP_MS), 1)
    const caller = i % 7 === 0 ? { id: `order-${i % 140}` } : {}
    all.push(event(id, i, caller))
  }
  // Duplicates by caller id (order-7): of an old event by an old one (147), and by a new one (427).
  all[147] = { ...all[147], duplicateOf: all[7].internalId }
  all[427] = { ...all[427], duplicateOf: all[7].internalId }
  // Two requests of 40 events in one millisecond each, one before the cutoff and one after: their
  // index values hold many events each, of several names and envs.
  for (const at of [BASE + 100 * STEP_MS + 1, BASE + 500 * STEP_MS + 1])
    seededUlids(newIdSeed(at), 40).forEach((id, k) =>
      all.push(event(id, k, { receivedAt: at, name: `batch/e${k % 3}`, env: k % 2 ? 'production' : 'feature-x' })),
    )
  // Off-clock: an ID made long before its receipt (a client's seed, a retry hours later), and one
  // made after it (a client clock ahead).
  const [late] = seededUlids(newIdSeed(BASE + 10 * STEP_MS), 1)
  all.push(event(late, 10, { receivedAt: BASE + 550 * STEP_MS, name: 'late/old-id' }))
  const [ahead] = seededUlids(newIdSeed(BASE + 400 * STEP_MS), 1)
  all.push(event(ahead, 400, { receivedAt: BASE + 200 * STEP_MS, name: 'late/new-id' }))
  const [early] = seededUlids(newIdSeed(BASE + 5 * STEP_MS), 1)
  all.push(event(early, 5, { receivedAt: BASE + 100 * STEP_MS, name: 'late/old-id' }))
  return all
}

async function storeWith(t: Test, stored: StoredEvent[]): Promise<{ rocks: Rocks; store: EventStore }> {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  t.teardown(async () => {
    await rocks.close()
    await removeDir(dir)
  })
  const store = createRocksEventStore(rocks)
  for (let i = 0; i < stored.length; i += 50) await store.insertEvents(stored.slice(i, i + 50))
  return { rocks, store }
}

async function listAll(store: EventStore, q: Omit<EventQuery, 'limit'>): Promise<string[]> {
  const ids: string[] = []
  for (let cursor: string | undefined; ; ) {
    const page = await store.queryEvents({ ...q, limit: 37, ...(cursor && { cursor }) })
    ids.push(...page.events.map((e) => e.internalId))
    if (page.nextCursor === null) return ids
    cursor = page.nextCursor
  }
}

const SPACES = ['events', 'eventsById', 'eventsByName', 'eventsByEnv', 'eventsByEnvName', 'eventsByReceivedAt'] as const

t.test(
  'events older than the cutoff go from the store and every index; the rest answer as if never stored',
  async (t) => {
    const all = events()
    const cutoffId = ulidFloor(CUTOFF)
    const kept = all.filter((e) => e.internalId >= cutoffId)
    const { rocks, store } = await storeWith(t, all)
    const { store: reference } = await storeWith(t, kept)
    await store.deleteBefore!(CUTOFF)

    const queries: Array<Omit<EventQuery, 'limit'>> = [
      {},
      { includeDuplicates: true },
      { name: 'app/e3' },
      { name: 'batch/e1' },
      { name: 'late/old-id' },
      { name: 'late/new-id' },
      { env: 'staging' },
      { env: 'feature-x' },
      { env: 'production', name: 'app/e0', includeDuplicates: true },
      { env: 'feature-x', name: 'batch/e2' },
      { id: 'order-7', includeDuplicates: true },
      { id: 'order-70' },
      { id: all[450].internalId },
      { receivedAfter: BASE + 100 * STEP_MS, receivedBefore: BASE + 560 * STEP_MS },
      { receivedAfter: BASE + 540 * STEP_MS, name: 'late/old-id' },
      { receivedBefore: BASE + 250 * STEP_MS },
    ]
    const answers = async (when: string) => {
      for (const q of queries)
        t.same(await listAll(store, q), await listAll(reference, q), `${when}: ${JSON.stringify(q)}`)
    }
    await answers('before the dedup id sweep')
    t.ok((await listAll(store, {})).length > 200, 'newer events are still listed')
    t.equal(await store.getEvent(all[10].internalId), null, 'an old event is gone')
    t.ok(await store.getEvent(all[450].internalId), 'a newer one is there')

    /** Keys of older events left in a space (every key ends in an ID; a value of several events', then its 8-character digest). */
    const left = async (space: (typeof SPACES)[number]) => {
      let older = 0
      for await (const { key } of rocks.scan(keyRange(space))) {
        // An event alone in its millisecond is under its ID; events sharing one, under the largest and a digest.
        const oneId = space === 'eventsByReceivedAt' || (space === 'events' && key.length === 27)
        const tail = oneId ? key.slice(-26) : key.slice(-34, -8)
        // An off-clock entry (H<receivedAt hex12><ID>) goes once its receive time is past the cutoff too.
        const received = space === 'eventsByReceivedAt' ? Number.parseInt(key.slice(1, 13), 16) : 0
        if (tail < cutoffId && received < CUTOFF) older++
      }
      return older
    }
    for (const space of SPACES.filter((s) => s !== 'eventsById'))
      t.equal(await left(space), 0, `${space} (${KEY_SPACES[space].prefix}): no key of an older event`)
    let offClock = 0
    for await (const _ of rocks.scan(keyRange('eventsByReceivedAt'))) offClock++
    t.equal(offClock, 2, 'off-clock entries left: the event kept, and the late one (received after the cutoff)')
    t.ok((await left('eventsById')) > 0, 'the dedup ids of older events wait for a sweep')
    await store.deleteBefore!(CUTOFF, { sweepIds: true })
    t.equal(await left('eventsById'), 0, 'swept')
    await answers('after it')
  },
)

t.test('a sweep of more dedup ids than one write takes; a stopped one leaves the rest to the next', async (t) => {
  const many = seededUlids(newIdSeed(BASE), 12_000).map((id, i) => event(id, i, { receivedAt: BASE, id: `order-${i}` }))
  const { rocks, store } = await storeWith(t, many)
  const count = async () => {
    let keys = 0
    for (const space of SPACES) for await (const _ of rocks.scan(keyRange(space))) keys++
    return keys
  }
  const stopped = new AbortController()
  stopped.abort()
  await store.deleteBefore!(BASE + 1, { sweepIds: true, signal: stopped.signal })
  t.equal(await count(), 12_000 - 5_000, 'stopped after its first write: only dedup ids are left')
  await store.deleteBefore!(BASE + 1, { sweepIds: true })
  t.equal(await count(), 0, 'no event and no entry is left')
})

t.test('sluice dev deletes what is older than SLUICE_EVENT_RETENTION_MS on its own, and says how far', async (t) => {
  const server = await startServer({ env: { SLUICE_EVENT_RETENTION_MS: '30000' } })
  t.teardown(server.stop)
  // An ID made a minute ago (a client's seed) is past the retention at once; a fresh one is not.
  const old = await postJson(
    `${server.url}/e/k`,
    { name: 'retention/old', data: {} },
    { 'x-service-event-id-seed': newIdSeed(Date.now() - 60_000) },
  )
  const fresh = await postJson(`${server.url}/e/k`, { name: 'retention/fresh', data: {} })
  t.same([old.status, fresh.status], [200, 200])
  const status = async (id: string) => (await getJson(`${server.url}/v1/events/${id}`)).status
  // Stored first, then deleted by a pass (every 3 s: a tenth of the retention).
  await eventually(async () => ((await status(fresh.body.ids[0])) === 200 ? true : undefined))
  await eventually(async () => ((await status(old.body.ids[0])) === 404 ? true : undefined), 15_000, 200)
  t.equal(await status(fresh.body.ids[0]), 200, 'the fresh event stays')
  t.same((await getJson(`${server.url}/v1/events?name=retention/old`)).body.data, [], 'nor listed by its name')
  const cutoff = (await scrape(server.url)).total('sluice_store_retention_cutoff_seconds')
  const now = Date.now() / 1000
  t.ok(cutoff > now - 40 && cutoff < now - 29, `the cutoff is ~30 s ago (${cutoff})`)
})

t.test('the setting: a number of ms, embedded only', async (t) => {
  t.throws(() => loadConfig('dev', {}, { SLUICE_EVENT_RETENTION_MS: '-1' }), {
    code: 'CONFIG_INVALID',
    message: /eventRetentionMs \(--event-retention-ms \/ SLUICE_EVENT_RETENTION_MS\)/,
  })
  t.throws(
    () => loadConfig('dev', {}, { SLUICE_EVENT_RETENTION_MS: '86400000', SLUICE_KAFKA_BROKERS: '127.0.0.1:9092' }),
    {
      code: 'CONFIG_INVALID',
      message: /SLUICE_EVENT_RETENTION_MS\): embedded mode only/,
    },
  )
  t.equal(loadConfig('dev', {}, {}).eventRetentionMs, 0, 'keeps every event by default')
})
