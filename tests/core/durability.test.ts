// Nothing acknowledged is lost: kill -9 the server under load, restart it on the same data
// dir, and every event that got a 200 is stored exactly once.
import t from 'tap'
import { spawnServer, tempDir, removeDir, getJson, eventually } from '../helpers/server.ts'

t.test('kill -9 mid-load, restart: every acknowledged event is stored exactly once', async (t) => {
  const dataDir = await tempDir()
  t.teardown(() => removeDir(dataDir))
  const first = await spawnServer(['dev', '--port', '0', '--data-dir', dataDir])
  const acknowledged = new Map<string, string>() // internal id → dedup id
  let counter = 0
  let killed = false
  const worker = async () => {
    while (!killed) {
      const batch = Array.from({ length: 1 + (counter % 5) }, () => ({
        name: 'load/event',
        data: { n: counter },
        id: `load-${counter++}`,
      }))
      try {
        const response = await fetch(`${first.url}/e/k`, {
          method: 'POST',
          body: JSON.stringify(batch),
          headers: { 'content-type': 'application/json' },
        })
        if (response.status !== 200) continue
        const { ids } = (await response.json()) as { ids: string[] }
        ids.forEach((id, i) => acknowledged.set(id, batch[i].id))
      } catch {
        // the server died under this request: not acknowledged
      }
    }
  }
  const workers = Array.from({ length: 16 }, worker)
  await eventually(async () => (acknowledged.size > 2000 ? true : undefined), 30_000)
  first.child.kill('SIGKILL')
  killed = true
  await Promise.all(workers)
  await first.stopped
  t.ok(acknowledged.size > 2000, `${acknowledged.size} events acknowledged before the kill`)

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
          `${second.url}/v1/events?name=load/event&include_duplicates=true&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
        )
        all.push(...page.body.data)
        cursor = page.body.metadata.cursor
      } while (cursor)
      const present = new Set(all.map((e) => e.internal_id))
      return [...acknowledged.keys()].every((id) => present.has(id)) ? all : undefined
    },
    60_000,
    250,
  )
  const byDedupId = new Map<string, number>()
  for (const e of stored) byDedupId.set(e.id, (byDedupId.get(e.id) ?? 0) + 1)
  const missing = [...acknowledged.keys()].filter((id) => !stored.some((e) => e.internal_id === id))
  t.same(missing, [], 'no acknowledged event is missing')
  t.ok(
    [...byDedupId.values()].every((n) => n === 1),
    'no event is stored twice',
  )
  t.equal(new Set(stored.map((e) => e.internal_id)).size, stored.length, 'no internal ID twice')
})
