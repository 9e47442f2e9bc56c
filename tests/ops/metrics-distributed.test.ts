// GET /metrics of every role in distributed mode, on the real Kafka broker and ClickHouse, each role
// a process of its own: the HTTP roles on their port, the others on their ops port. Each metric
// family moves on the role whose behaviour it counts; with the broker gone, publishes fail and are
// counted, and a scrape still answers at once. On the default Kafka client (@platformatic/kafka;
// SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventually, getJson, postJson, removeDir, tempDir } from '../helpers/server.ts'
import { startKafka } from '../infra/kafka.ts'
import { auth, distributedEnv, startNode, type Node } from '../distributed/cluster.ts'
import { change, scrape, scrapeUntil, type Scrape } from './metrics-scrape.ts'

t.setTimeout(240_000)

const FUNCTIONS = join(import.meta.dirname, 'fixtures/metrics-functions.ts')
/** Four processes start at once on a 2-core machine, maybe beside other test files. */
const slowStart = { startTimeoutMs: 90_000 }

t.test('every role serves /metrics, and each family moves on the role that does the work', async (t) => {
  const env = distributedEnv('metrics')
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill())))
  const track = async (starting: Promise<Node>) => {
    const node = await starting
    nodes.push(node)
    return node
  }
  // The HTTP node first: its api role creates the ClickHouse tables the others write to.
  const http = await track(startNode(['ingest', 'api'], env, [], 'start', slowStart))
  const started = await Promise.allSettled(
    [
      startNode(['dedup'], env, [], 'start', slowStart),
      startNode(['transformer', 'router', 'sink'], env, [], 'start', slowStart),
      startNode(['runner'], env, ['--functions', FUNCTIONS], 'start', slowStart),
    ].map(track),
  )
  for (const s of started) if (s.status === 'rejected') throw s.reason
  const [dedup, pipeline, runner] = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const rest = (path: string, body?: unknown) =>
    body === undefined ? getJson(`${http.url}${path}`, auth) : postJson(`${http.url}${path}`, body, auth)

  const roles = async (node: Node) => (await scrape(node.opsUrl!)).find('sluice_info')[0]?.labels.roles
  t.same(
    await Promise.all([http, dedup, pipeline, runner].map(roles)),
    ['api,ingest', 'dedup', 'router,sink,transformer', 'runner'],
    "/metrics on each ops port, the HTTP roles' too",
  )

  const open = await getJson(`${http.url}/metrics`)
  t.same(open.body.code, 'NOT_FOUND', 'not on the HTTP port, which may be public (SLUICE_METRICS_LISTENER)')

  const key = (await rest('/v1/keys', { env: 'production' })).body.data.key as string
  const send = (body: unknown, path = `/e/${key}`) =>
    eventually(async () => {
      // The new key reaches the ingest role through the control topic within moments.
      const r = await postJson(`${http.url}${path}`, body)
      return r.status === 401 && path.includes(key) ? undefined : r
    }, 30_000)

  await t.test('ingest and api: events accepted and refused, HTTP by route template, Kafka publishes', async (t) => {
    const before = await scrape(http.opsUrl!)
    const accepted = await send([1, 2, 3].map((n) => ({ name: 'metrics/order.placed', data: { n } })))
    t.equal(accepted.status, 200)
    t.equal((await send('{"name":')).body.code, 'JSON_INVALID')
    t.equal((await send({ name: 'x', data: {} }, '/e/sk_not_a_key')).body.code, 'KEY_INVALID')
    const after = await scrape(http.opsUrl!)
    t.equal(change(before, after, 'sluice_ingest_events_accepted_total', { env: 'production' }), 3)
    const rejected = (labels: Record<string, string>) =>
      change(before, after, 'sluice_ingest_requests_rejected_total', { api: 'event', ...labels })
    t.equal(rejected({ env: 'production', code: 'JSON_INVALID' }), 1)
    t.equal(rejected({ env: '', code: 'KEY_INVALID' }), 1, 'a wrong key names no environment')
    const eventApi = { method: 'POST', route: '/e/:key' }
    t.equal(change(before, after, 'sluice_http_requests_total', { ...eventApi, status: '200' }), 1)
    t.equal(change(before, after, 'sluice_http_requests_total', { ...eventApi, status: '401' }), 1)
    t.ok(change(before, after, 'sluice_log_publish_duration_seconds_count', { bus: 'kafka' }) >= 1)
    t.ok(change(before, after, 'sluice_log_published_records_total', { bus: 'kafka' }) >= 3)
    const view = `${env.SLUICE_TOPIC_PREFIX}.control.view`
    t.same(
      after.find('sluice_consumer_lag_records').map((s) => s.labels.group),
      [view],
      'its control-plane view, named the same on every start (no per-process id)',
    )
    t.notOk(after.text.includes(key), 'no event key in any label')
    t.notOk(after.text.includes(accepted.body.ids[0]), 'no event ID in any label')
  })

  await t.test('dedup: accepted and duplicate, and its consumer lag per partition', async (t) => {
    const before = await scrape(dedup.opsUrl!)
    const event = { name: 'metrics/signed-up', data: {}, id: `user-${Date.now()}` }
    for (let i = 0; i < 2; i++) t.equal((await send(event)).status, 200)
    const after = await scrapeUntil(
      dedup.opsUrl!,
      (s) => change(before, s, 'sluice_dedup_events_total', { outcome: 'duplicate' }) >= 1,
      30_000,
    )
    t.equal(change(before, after, 'sluice_dedup_events_total', { outcome: 'duplicate' }), 1)
    t.ok(change(before, after, 'sluice_dedup_events_total', { outcome: 'accepted' }) >= 1)
    const lag = after.find('sluice_consumer_lag_records', { group: 'dedup' })
    t.same(lag.map((s) => s.labels.partition).sort(), ['0', '1', '2', '3'], 'one series per partition it holds')
    t.equal(after.total('sluice_ready'), 1, 'ready: its partitions are restored')
  })

  await t.test('transformer and sink: webhook outcomes, transform durations, ClickHouse inserts', async (t) => {
    const transform = (body: string) => `function transform(evt) { ${body} }`
    const create = async (body: Record<string, unknown>) => (await rest('/v1/webhooks', body)).body.data
    const hooks = {
      delivered: await create({ name: 'M ok', transform: transform('return { name: "m/ok", data: {} }') }),
      filtered: await create({
        name: 'M denied',
        transform: transform('return { name: "m/denied", data: {} }'),
        deny_events: ['m/denied'],
      }),
      failed: await create({ name: 'M broken', transform: transform('return evt.missing.field') }),
    }
    const before = await scrape(pipeline.opsUrl!)
    for (const hook of Object.values(hooks)) t.equal((await send({ n: 1 }, `/e/${hook.id}`)).status, 200)
    const after = await scrapeUntil(
      pipeline.opsUrl!,
      (s) => change(before, s, 'sluice_webhook_requests_total') >= 3,
      30_000,
      'three webhook outcomes',
    )
    const outcomes = (labels: Record<string, string>) => change(before, after, 'sluice_webhook_requests_total', labels)
    t.equal(outcomes({ outcome: 'delivered', code: '' }), 1)
    t.equal(outcomes({ outcome: 'filtered', code: 'EVENT_NAME_DENIED' }), 1)
    t.equal(outcomes({ outcome: 'failed', code: 'TRANSFORM_THREW' }), 1)
    t.equal(change(before, after, 'sluice_transform_duration_seconds_count', { lane: 'shared' }), 3)
    const stored = await scrapeUntil(
      pipeline.opsUrl!,
      (s) => change(before, s, 'sluice_clickhouse_inserted_rows_total', { table: 'requests' }) >= 3,
      30_000,
      'request rows in ClickHouse',
    )
    t.ok(change(before, stored, 'sluice_clickhouse_insert_duration_seconds_count', { table: 'requests' }) >= 1)
    t.ok(stored.total('sluice_clickhouse_inserted_rows_total', { table: 'events' }) >= 5, 'event rows (the sink)')
    for (const group of ['transformer', 'router', 'store-sink', 'run-sink'])
      t.ok(stored.find('sluice_consumer_lag_records', { group }).length > 0, `lag of ${group}`)
    for (const hook of Object.values(hooks)) t.notOk(stored.text.includes(hook.id), 'no webhook ID in any label')
  })

  await t.test('runner: runs by function and outcome, step durations, lag behind a waiting run', async (t) => {
    await eventually(async () => ((await rest('/v1/functions')).body.data.length === 3 ? true : undefined), 30_000)
    const dir = await tempDir()
    t.teardown(() => removeDir(dir))
    const gate = join(dir, 'gate')
    const before = await scrape(runner.opsUrl!)
    const waiting = [1, 2, 3].map((n) => ({ name: 'metrics/gated', data: { n, gate } }))
    t.equal((await send(waiting)).status, 200)
    const group = { group: 'runner.production~metrics-gated' }
    await scrapeUntil(runner.opsUrl!, (s) => s.total('sluice_consumer_lag_records', group) === 3, 30_000, 'lag 3')
    t.pass('three runs wait on the function topic: lag 3')
    t.equal((await send({ name: 'metrics/fails', data: {} })).status, 200)
    await writeFile(gate, 'open')
    const runs = (s: Scrape, fn: string, outcome: string) =>
      change(before, s, 'sluice_function_runs_total', { function: fn, outcome })
    const after = await scrapeUntil(
      runner.opsUrl!,
      (s) =>
        runs(s, 'metrics-gated', 'completed') === 3 &&
        runs(s, 'metrics-fails', 'failed') === 1 &&
        s.total('sluice_consumer_lag_records', group) === 0,
      30_000,
      'runs to end and the lag to drain',
    )
    const steps = (fn: string, outcome: string) =>
      change(before, after, 'sluice_function_step_duration_seconds_count', { function: fn, outcome })
    t.equal(steps('metrics-gated', 'continue'), 3)
    t.equal(steps('metrics-gated', 'completed'), 3)
    t.equal(steps('metrics-fails', 'failed'), 1)
    const sink = await scrapeUntil(
      pipeline.opsUrl!,
      (s) => s.total('sluice_clickhouse_inserted_rows_total', { table: 'runs' }) >= 4,
      30_000,
      'run rows in ClickHouse',
    )
    t.ok(sink.total('sluice_clickhouse_insert_duration_seconds_count', { table: 'runs' }) >= 1)
  })
})

t.test('the broker gone: publishes fail and are counted, the refusal too, and a scrape still answers', async (t) => {
  const kafka = await startKafka({ brokers: 1 })
  t.teardown(() => kafka.stop())
  const env = distributedEnv('metricsdown', kafka.brokers)
  const node = await startNode(['ingest', 'dedup'], env, [], 'dev', slowStart)
  t.teardown(() => node.kill())
  const send = () => postJson(`${node.url}/e/any`, { name: 'metrics/x', data: {} })
  await eventually(async () => ((await send()).status === 200 ? true : undefined), 30_000, 100)
  const before = await scrape(node.url)
  t.ok(before.find('sluice_consumer_lag_records', { group: 'dedup' }).length > 0, 'lag read from the broker')

  await kafka.stopBroker(0, { signal: 'SIGKILL' })
  t.equal((await send()).body.code, 'LOG_UNAVAILABLE')
  const started = Date.now()
  const after = await scrape(node.url)
  const ms = Date.now() - started
  t.ok(ms < 3000, `/metrics answered in ${ms} ms with the broker gone`)
  t.ok(change(before, after, 'sluice_log_publish_failures_total', { bus: 'kafka' }) >= 1, 'publish failures')
  const refused = { api: 'event', env: 'production', code: 'LOG_UNAVAILABLE' }
  t.equal(change(before, after, 'sluice_ingest_requests_rejected_total', refused), 1, 'the 503 counted by code')
  t.equal(after.find('sluice_consumer_lag_records').length, 0, 'no stale lag when the broker cannot be asked')
  t.equal(after.total('sluice_ready'), 0, 'not ready')
})
