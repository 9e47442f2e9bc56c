// GET /metrics of an embedded server (every role in one process, as `sluice dev` runs): each metric
// family moves when its behaviour happens (events sent, refused, repeated; webhooks delivered,
// filtered, failed; functions run, completed, failed; consumer lag building up and draining),
// and no label carries an event ID or a webhook ID.
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { getJson, postJson, removeDir, startServer, tempDir } from '../helpers/server.ts'
import { createWebhook, deliver, outcome } from '../webhooks/helpers.ts'
import { change, scrape, scrapeUntil, type Scrape } from './metrics-scrape.ts'

const FUNCTIONS = join(import.meta.dirname, 'fixtures/metrics-functions.ts')
// One partition: a run that waits holds back the runs behind it, so lag builds up behind it.
const server = await startServer({ flags: { functionsFile: FUNCTIONS, partitions: '1' } })
t.teardown(async () => {
  await server.stop()
  await removeDir(server.dataDir)
})
const url = server.url

/** Every consumer group has caught up (no event of an earlier test is still on its way). */
const caughtUp = () => scrapeUntil(url, (s) => s.total('sluice_consumer_lag_records') === 0, 20_000, 'consumer lag 0')

t.test('GET /metrics: Prometheus text, the process defaults, the roles and readiness', async (t) => {
  const s = await scrape(url)
  t.match(s.contentType, /^text\/plain; version=0\.0\.4/)
  for (const name of [
    'process_resident_memory_bytes',
    'process_cpu_seconds_total',
    'nodejs_heap_size_used_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_eventloop_lag_p99_seconds',
  ])
    t.ok(s.find(name).length > 0, `${name} is reported`)
  t.equal(s.types.get('nodejs_gc_duration_seconds'), 'histogram', 'GC durations')
  t.equal(s.total('sluice_info', { roles: 'api,dedup,ingest,router,runner,sink,transformer' }), 1)
  t.equal(s.total('sluice_ready'), 1, 'ready')
  t.ok(
    s.find('sluice_consumer_lag_records', { group: 'dedup', topic: 'sluice.incoming', partition: '0' }).length === 1,
    'lag is reported for each group and partition this process consumes',
  )
  const memtables = s.total('sluice_rocksdb_memory_bytes', { kind: 'memtables' })
  t.ok(memtables > 0 && memtables <= 2 * 16 * 1024 * 1024, `RocksDB memtables: ${memtables} bytes, within 2 × 16 MiB`)
  for (const kind of ['memtables', 'block_cache', 'table_readers'])
    t.same(
      s
        .find('sluice_rocksdb_memory_bytes', { kind })
        .map((series) => series.labels.family)
        .sort(),
      [
        'dedup',
        'dedupInternalIds',
        'default',
        'events',
        'eventsByEnv',
        'eventsByEnvName',
        'eventsById',
        'eventsByName',
        'log',
      ],
      `RocksDB ${kind}, by column family`,
    )
  for (const kind of ['flush', 'compaction'])
    t.ok(s.find('sluice_rocksdb_jobs_running', { kind }).length === 1, `RocksDB ${kind} jobs running`)
  t.equal(s.find('sluice_rocksdb_pending_compaction_bytes').length, 1, 'RocksDB pending compaction bytes')
})

t.test(
  'the Event API: events accepted, requests refused by environment and code, HTTP by route template',
  async (t) => {
    const before = await scrape(url)
    const events = JSON.stringify([1, 2, 3].map((n) => ({ name: 'metrics/order.placed', data: { n } })))
    const accepted = await postJson(`${url}/e/dev`, events)
    t.equal(accepted.status, 200)
    const notJson = '{"name":'
    t.equal((await postJson(`${url}/e/dev`, notJson)).body.code, 'JSON_INVALID')
    const invalid = JSON.stringify({ name: '', data: {} })
    t.equal((await postJson(`${url}/e/dev`, invalid)).body.code, 'EVENT_INVALID')
    const id = accepted.body.ids[0]
    t.equal((await getJson(`${url}/v1/events/${id}/runs`)).status, 200)
    t.equal((await getJson(`${url}/no/such/path/${id}`)).status, 404)
    const after = await scrapeUntil(url, (s) => change(before, s, 'sluice_dedup_events_total') >= 3)

    t.equal(change(before, after, 'sluice_ingest_events_accepted_total', { env: 'production' }), 3, 'events accepted')
    const refused = { api: 'event', env: 'production' }
    t.equal(change(before, after, 'sluice_ingest_requests_rejected_total', { ...refused, code: 'JSON_INVALID' }), 1)
    t.equal(change(before, after, 'sluice_ingest_requests_rejected_total', { ...refused, code: 'EVENT_INVALID' }), 1)
    const eventApi = { method: 'POST', route: '/e/:key' }
    t.equal(change(before, after, 'sluice_http_requests_total', { ...eventApi, status: '200' }), 1)
    t.equal(change(before, after, 'sluice_http_requests_total', { ...eventApi, status: '400' }), 2)
    t.equal(change(before, after, 'sluice_http_request_duration_seconds_count', eventApi), 3)
    t.ok(change(before, after, 'sluice_http_request_duration_seconds_sum', eventApi) > 0, 'durations add up')
    const runsRoute = { method: 'GET', route: '/v1/events/:id/runs', status: '200' }
    t.equal(change(before, after, 'sluice_http_requests_total', runsRoute), 1, 'the route template, not the URL')
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' }
    t.equal(change(before, after, 'sluice_http_requests_total', unmatched), 1, 'one label for every unknown path')
    t.equal(change(before, after, 'sluice_ingest_request_bytes_count', { api: 'event' }), 3)
    const bytes = Buffer.byteLength(events) + Buffer.byteLength(notJson) + Buffer.byteLength(invalid)
    t.equal(change(before, after, 'sluice_ingest_request_bytes_sum', { api: 'event' }), bytes, 'body bytes')
    t.ok(change(before, after, 'sluice_log_publish_duration_seconds_count', { bus: 'local' }) >= 1, 'publish latency')
    // Deduplicated, stored and routed in one write (one-pass/index.ts), counted as dedup passed them.
    t.equal(change(before, after, 'sluice_dedup_events_total', { outcome: 'accepted' }), 3, 'passed dedup')
    t.notOk(after.text.includes(id), 'no event ID in any label')
  },
)

t.test('dedup: the first event of an id is accepted, a repeat is a duplicate', async (t) => {
  await caughtUp()
  const before = await scrape(url)
  const event = { name: 'metrics/signed-up', data: {}, id: `user-${Date.now()}` }
  for (let i = 0; i < 2; i++) t.equal((await postJson(`${url}/e/dev`, event)).status, 200)
  const after = await scrapeUntil(url, (s) => change(before, s, 'sluice_dedup_events_total') >= 2)
  t.equal(change(before, after, 'sluice_dedup_events_total', { outcome: 'accepted' }), 1)
  t.equal(change(before, after, 'sluice_dedup_events_total', { outcome: 'duplicate' }), 1)
  t.notOk(after.text.includes(event.id), 'no dedup id in any label')
})

t.test('webhooks: delivered, filtered by the name rules, failed by code; transform durations', async (t) => {
  const transform = (body: string) => `function transform(evt) { ${body} }`
  const hooks = {
    delivered: await createWebhook(url, { name: 'M ok', transform: transform('return { name: "m/ok", data: {} }') }),
    filtered: await createWebhook(url, {
      name: 'M denied',
      transform: transform('return { name: "m/denied", data: {} }'),
      deny_events: ['m/denied'],
    }),
    failed: await createWebhook(url, { name: 'M broken', transform: transform('return evt.missing.field') }),
  }
  const before = await scrape(url)
  const sent: Record<string, string> = {}
  for (const [kind, hook] of Object.entries(hooks)) {
    const answer = await deliver(hook.url, { kind })
    t.equal(answer.status, 200, `${kind}: the sender is answered 200 whatever the transform does`)
    sent[kind] = (await outcome(url, hook.id, answer.body.request_id)).status
  }
  t.same(sent, { delivered: 'delivered', filtered: 'failed', failed: 'failed' }, 'recorded outcomes')
  const after = await scrapeUntil(url, (s) => change(before, s, 'sluice_webhook_requests_total') >= 3)
  const outcomes = (labels: Record<string, string>) => change(before, after, 'sluice_webhook_requests_total', labels)
  t.equal(outcomes({ outcome: 'delivered', code: '' }), 1)
  t.equal(outcomes({ outcome: 'filtered', code: 'EVENT_NAME_DENIED' }), 1)
  t.equal(outcomes({ outcome: 'failed', code: 'TRANSFORM_THREW' }), 1)
  t.equal(change(before, after, 'sluice_ingest_webhook_requests_accepted_total'), 3, 'captured at ingest')
  t.equal(change(before, after, 'sluice_ingest_request_bytes_count', { api: 'webhook' }), 3)
  t.equal(change(before, after, 'sluice_transform_duration_seconds_count', { lane: 'shared' }), 3, 'transforms timed')
  for (const hook of Object.values(hooks)) t.notOk(after.text.includes(hook.id), 'no webhook ID in any label')
})

t.test('functions: runs by function and outcome, step durations; lag builds up behind a waiting run', async (t) => {
  await caughtUp()
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const gate = join(dir, 'gate')
  const before = await scrape(url)
  const waiting = [1, 2, 3].map((n) => ({ name: 'metrics/gated', data: { n, gate } }))
  t.equal((await postJson(`${url}/e/dev`, waiting)).status, 200)
  const group = { group: 'runner.production~metrics-gated' }
  const held = await scrapeUntil(url, (s) => s.total('sluice_consumer_lag_records', group) === 3)
  t.equal(held.total('sluice_consumer_lag_records', group), 3, 'three runs waiting on the function topic')
  t.equal((await postJson(`${url}/e/dev`, { name: 'metrics/fails', data: {} })).status, 200)
  const limited = [1, 2, 3].map((n) => ({ name: 'metrics/limited', data: { n } }))
  t.equal((await postJson(`${url}/e/dev`, limited)).status, 200)
  await writeFile(gate, 'open')
  const runs = (s: Scrape, fn: string, outcome: string) =>
    change(before, s, 'sluice_function_runs_total', { function: fn, outcome })
  const after = await scrapeUntil(
    url,
    (s) =>
      runs(s, 'metrics-gated', 'completed') === 3 &&
      runs(s, 'metrics-fails', 'failed') === 1 &&
      runs(s, 'metrics-limited', 'skipped') === 2 &&
      s.total('sluice_consumer_lag_records', group) === 0,
  )
  t.pass('3 completed, 1 failed, 2 skipped, and the lag drained')
  const skipped = { function: 'metrics-limited', reason: 'RATE_LIMITED' }
  t.equal(change(before, after, 'sluice_function_runs_skipped_total', skipped), 2, 'skipped, and why')
  const steps = (fn: string, outcome: string) =>
    change(before, after, 'sluice_function_step_duration_seconds_count', { function: fn, outcome })
  t.equal(steps('metrics-gated', 'continue'), 3, 'the waiting step, once per run')
  t.equal(steps('metrics-gated', 'completed'), 3)
  t.equal(steps('metrics-fails', 'failed'), 1)
  const waited = change(before, after, 'sluice_function_step_duration_seconds_sum', { function: 'metrics-gated' })
  t.ok(waited > 0, `step time adds up (${waited.toFixed(3)} s)`)
})
