// kill -9 of a dedup node while events with repeated ids flow: its partitions move to the
// other node, which restores their state from the changelog, and ClickHouse holds every
// acknowledged event exactly once, with one original per id.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { getJson, eventually } from '../helpers/server.ts'
import { distributedEnv, startNode, auth, type Node } from './cluster.ts'

t.setTimeout(300_000)

t.test('a killed dedup node loses nothing and lets no duplicate through', async (t) => {
  const env = distributedEnv('failover')
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill())))
  const api = await startNode(['api'], env)
  nodes.push(api)
  const [ingest, sink, dedupA, dedupB] = await Promise.all([
    startNode(['ingest'], env),
    startNode(['sink'], env),
    startNode(['dedup'], env),
    startNode(['dedup'], env),
  ])
  nodes.push(ingest, sink, dedupA, dedupB)
  const { data: key } = await fetch(`${api.url}/v1/keys`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ env: 'production' }),
  }).then((r) => r.json())
  await eventually(
    async () =>
      (await fetch(`${ingest.url}/e/${key.key}`, { method: 'POST', body: '{"name":"fo/warmup","data":{}}' })).status ===
      200
        ? true
        : undefined,
    30_000,
    100,
  )

  const acknowledged = new Map<string, string>() // internal id → dedup id
  let sent = 0
  let stop = false
  const sender = (async () => {
    while (!stop) {
      // 20 distinct ids, each sent many times over the run.
      const batch = Array.from({ length: 10 }, () => ({ name: 'fo/event', data: { n: sent }, id: `fo-${sent++ % 20}` }))
      const response = await fetch(`${ingest.url}/e/${key.key}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(batch),
      }).catch(() => undefined)
      if (response?.status === 200)
        (await response.json()).ids.forEach((id: string, i: number) => acknowledged.set(id, batch[i].id))
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  await eventually(async () => (acknowledged.size >= 300 ? true : undefined), 60_000, 100)
  await dedupA.kill('SIGKILL')
  const atKill = acknowledged.size
  await eventually(async () => (acknowledged.size >= atKill + 300 ? true : undefined), 120_000, 100)
  stop = true
  await sender

  const rows = await eventually(
    async () => {
      const all: Array<{ internal_id: string; id: string; duplicate_of?: string }> = []
      let cursor: string | null = null
      do {
        const page: { body: { data: typeof all; metadata: { cursor: string | null } } } = await getJson(
          `${api.url}/v1/events?name=fo/event&include_duplicates=true&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
          auth,
        )
        all.push(...page.body.data)
        cursor = page.body.metadata.cursor
      } while (cursor)
      return all.length >= acknowledged.size ? all : undefined
    },
    120_000,
    1000,
  )
  t.equal(rows.length, acknowledged.size, `every acknowledged event stored once (${acknowledged.size})`)
  t.same(new Set(rows.map((r) => r.internal_id)), new Set(acknowledged.keys()))
  const originals = rows.filter((r) => !r.duplicate_of)
  t.same(
    originals.map((r) => r.id).sort(),
    Array.from({ length: 20 }, (_, i) => `fo-${i}`).sort(),
    'exactly one original per id',
  )
})
