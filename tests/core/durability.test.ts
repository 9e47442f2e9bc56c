// Nothing acknowledged is lost: kill -9 the server under load, restart it on the same data
// dir, and every event that got a 200 is stored exactly once. Once under small requests, once
// under 500-event batches with a backlog limit low enough that some requests are held back and
// refused (503 PIPELINE_BEHIND): those were never acknowledged, the rest must all be there.
import t, { type Test } from 'tap'
import { spawnServer, tempDir, removeDir, getJson, eventually } from '../helpers/server.ts'

interface Load {
  name: string
  batchSize: (n: number) => number
  workers: number
  acknowledgedAtLeast: number
  env?: NodeJS.ProcessEnv
}

async function killMidLoad(t: Test, load: Load): Promise<void> {
  const dataDir = await tempDir()
  t.teardown(() => removeDir(dataDir))
  const first = await spawnServer(['dev', '--port', '0', '--data-dir', dataDir], load.env)
  const acknowledged = new Map<string, string>() // internal id → dedup id
  const statuses = new Map<number, number>()
  let counter = 0
  let killed = false
  const worker = async () => {
    while (!killed) {
      const batch = Array.from({ length: load.batchSize(counter) }, () => ({
        name: load.name,
        data: { n: counter },
        // Every other event without an id: its dedup id is its internal ID.
        ...(counter % 2 === 0 ? { id: `load-${counter}` } : {}),
        n: counter++,
      }))
      try {
        const response = await fetch(`${first.url}/e/k`, {
          method: 'POST',
          body: JSON.stringify(batch.map(({ n: _, ...event }) => event)),
          headers: { 'content-type': 'application/json' },
        })
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
        if (response.status !== 200) continue
        const { ids } = (await response.json()) as { ids: string[] }
        ids.forEach((id, i) => acknowledged.set(id, batch[i].id ?? id))
      } catch {
        // the server died under this request: not acknowledged
      }
    }
  }
  const workers = Array.from({ length: load.workers }, worker)
  await eventually(async () => (acknowledged.size > load.acknowledgedAtLeast ? true : undefined), 60_000)
  first.child.kill('SIGKILL')
  killed = true
  await Promise.all(workers)
  await first.stopped
  t.ok(acknowledged.size > load.acknowledgedAtLeast, `${acknowledged.size} events acknowledged before the kill`)
  t.comment(`answers before the kill: ${JSON.stringify(Object.fromEntries(statuses))}`)

  const second = await spawnServer(['dev', '--port', '0', '--data-dir', dataDir])
  t.teardown(() => {
    second.child.kill('SIGTERM')
    return second.stopped
  })
  const stored = await eventually(
    async () => {
      const all: Array<{ internal_id: string; id: string }> = []
      let cursor: string | null = null
      do {
        const page: {
          body: { data: Array<{ internal_id: string; id: string }>; metadata: { cursor: string | null } }
        } = await getJson(
          `${second.url}/v1/events?name=${load.name}&include_duplicates=true&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
        )
        all.push(...page.body.data)
        cursor = page.body.metadata.cursor
      } while (cursor)
      const present = new Set(all.map((e) => e.internal_id))
      return [...acknowledged.keys()].every((id) => present.has(id)) ? all : undefined
    },
    90_000,
    250,
  )
  const storedIds = new Set(stored.map((e) => e.internal_id))
  t.same(
    [...acknowledged.keys()].filter((id) => !storedIds.has(id)),
    [],
    'no acknowledged event is missing',
  )
  const byDedupId = new Map<string, number>()
  for (const e of stored) byDedupId.set(e.id, (byDedupId.get(e.id) ?? 0) + 1)
  t.same(
    [...byDedupId].filter(([, n]) => n > 1),
    [],
    'no event is stored twice',
  )
  t.equal(storedIds.size, stored.length, 'no internal ID twice')
}

t.test('kill -9 mid-load, restart: every acknowledged event is stored exactly once', (t) =>
  // With the stages decoding every record themselves: the other test runs the default, which shares parsed events.
  killMidLoad(t, {
    name: 'load/event',
    batchSize: (n) => 1 + (n % 5),
    workers: 16,
    acknowledgedAtLeast: 2000,
    env: { SLUICE_LOCAL_LOG_SHARE_VALUES: 'false' },
  }),
)

t.test('kill -9 under 500-event batches held back by the pipeline: every acknowledged event, exactly once', (t) =>
  killMidLoad(t, {
    name: 'load/batch',
    batchSize: () => 500,
    workers: 8,
    acknowledgedAtLeast: 20_000,
    // A backlog limit of four requests and a short wait: requests wait, some are refused.
    env: { SLUICE_LOCAL_LOG_MAX_BACKLOG_RECORDS: '2000', SLUICE_LOCAL_LOG_BACKLOG_WAIT_MS: '100' },
  }),
)
