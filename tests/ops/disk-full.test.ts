// The data dir's disk fills up (embedded mode): the Event API answers 503 LOG_UNAVAILABLE, so
// nothing is accepted that is not durable, the failures are counted for the alert and logged
// without flooding the log (docs/operations.md, "A full disk"), /readyz answers 503 with the reason
// while the log cannot write, and once space is freed Sluice is ready and takes events again by
// itself (with no request to show it), with every event it acknowledged before stored. A small disk is a
// tmpfs, mounted when the test runs as root (as CI does); elsewhere the test is skipped.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { eventually, getJson, postJson, removeDir, tempDir } from '../helpers/server.ts'
import { scrape } from './metrics-scrape.ts'
import { spawnSluice } from './sluice-process.ts'

t.setTimeout(180_000)
const disk = await tempDir('sluice-disk-full-')
let mounted = false
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=200m', 'tmpfs', disk], { stdio: 'ignore' })
  mounted = true
} catch {
  t.plan(0, 'mounting a tmpfs needs root')
}

if (mounted) {
  // 150 of the 200 MiB taken: RocksDB fills the rest within a few dozen batches.
  const filler = join(disk, 'filler')
  await writeFile(filler, Buffer.alloc(150 * 1024 * 1024))
  const dataDir = join(disk, 'data')
  await mkdir(dataDir)
  const sluice = spawnSluice(['dev', '--port', '0', '--data-dir', dataDir], {})
  t.teardown(async () => {
    sluice.child.kill('SIGTERM')
    await sluice.exited
    execFileSync('umount', [disk])
    await removeDir(disk)
  })
  const batch = Array.from({ length: 500 }, (_, i) => ({ name: 'disk/full', data: { i, pad: 'x'.repeat(200) } }))
  const url = await sluice.up()
  const publishFailures = async () => (await scrape(url)).total('sluice_log_publish_failures_total')
  // The log's retention and its offset commits retry every 100 ms, and warned each time.
  const retryWarnings = () =>
    sluice.output().match(/"msg":"(log retention failed|offset commit failed; retrying)"/g)?.length ?? 0

  const readyz = async () => {
    const response = await fetch(`${url}/readyz`)
    return { status: response.status, body: await response.json() }
  }

  t.test('a full disk: 503 LOG_UNAVAILABLE, counted; freed: accepted again, nothing acknowledged lost', async (t) => {
    t.same(await readyz(), { status: 200, body: { status: 'ready' } }, 'ready before the disk fills')
    const failuresBefore = await publishFailures()
    let acknowledged: string[] = []
    const everyAcknowledged: string[] = []
    let refusal: { status: number; body: any; headers: Headers } | undefined
    for (let i = 0; i < 2000 && !refusal; i++) {
      const answer = await postJson(`${url}/e/any`, batch)
      if (answer.status === 200) {
        acknowledged = answer.body.ids
        everyAcknowledged.push(...acknowledged)
      } else refusal = answer
    }
    if (!refusal) return t.fail('the disk never filled')
    t.equal(refusal.status, 503)
    t.equal(refusal.body.code, 'LOG_UNAVAILABLE')
    t.equal(refusal.headers.get('retry-after'), '1', 'with Retry-After')
    t.ok((await publishFailures()) > failuresBefore, 'sluice_log_publish_failures_total counts it')
    const warningsBefore = retryWarnings()
    await sleep(5000)
    t.ok(
      retryWarnings() - warningsBefore <= 2,
      `${retryWarnings() - warningsBefore} retry warnings in 5 s, at most one each 10 s`,
    )

    const full = {
      status: 503,
      body: { status: 'not_ready', reasons: { 'event log': "cannot write: the data dir's disk is full" } },
    }
    t.same(await readyz(), full, '/readyz: 503 with the reason while the disk is full')
    await sleep(1000)
    t.same(await readyz(), full, 'and still, a second later (its own retry write fails too)')

    await rm(filler)
    // No request is sent meanwhile: a node that is not ready gets none, so readiness must find out by itself.
    const ready = await eventually(
      async () => {
        const answer = await readyz()
        return answer.status === 200 ? answer : undefined
      },
      30_000,
      500,
    )
    t.same(ready.body, { status: 'ready' }, '/readyz: ready again once space is freed, before any request')
    const accepted = await eventually(
      async () => {
        const answer = await postJson(`${url}/e/any`, batch)
        return answer.status === 200 ? answer : undefined
      },
      30_000,
      500,
    )
    t.equal(accepted.body.ids.length, 500, 'a batch is accepted again once space is freed')
    // The last batch acknowledged before the disk filled, and the first after, are stored whole.
    for (const id of [acknowledged[0], acknowledged[499], accepted.body.ids[0], accepted.body.ids[499]]) {
      const stored = await eventually(async () => {
        const answer = await getJson(`${url}/v1/events/${id}`)
        return answer.status === 200 ? answer : undefined
      }, 30_000)
      t.equal(stored.body.data.internal_id, id)
    }
    everyAcknowledged.push(...accepted.body.ids)
    const stored = new Set<string>()
    for (let cursor = ''; ; ) {
      const page = await getJson(`${url}/v1/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`)
      for (const event of page.body.data) stored.add(event.internal_id)
      if (page.body.data.length < 1000) break
      cursor = page.body.data[page.body.data.length - 1].internal_id
    }
    const lost = everyAcknowledged.filter((id) => !stored.has(id))
    t.same(lost.slice(0, 5), [], `all ${everyAcknowledged.length} acknowledged events stored (${lost.length} missing)`)
  })
}
