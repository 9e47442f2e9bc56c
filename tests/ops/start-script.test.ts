// `npm start` (scripts/start.sh) runs the Dev Server on jemalloc when it is installed, as the image
// does: under glibc's malloc RSS steps up at RocksDB's first large compaction (docs/operations.md,
// "Allocator"). provision.sh installs Debian's libjemalloc2, so the library is there to be found.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { eventually, getJson, postJson, removeDir, spawnStartScript, tempDir } from '../helpers/server.ts'

const mapped = (pid: number) => readFileSync(`/proc/${pid}/maps`, 'utf8')
const environ = (pid: number) =>
  new Map(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  )

async function start(t: Test, env: NodeJS.ProcessEnv = {}) {
  const dataDir = await tempDir()
  const server = await spawnStartScript(['--port', '0', '--data-dir', dataDir], { LD_PRELOAD: '', ...env })
  t.teardown(async () => {
    server.child.kill('SIGTERM')
    await server.stopped
    await removeDir(dataDir)
  })
  return { ...server, pid: server.child.pid! }
}

t.test('jemalloc by default: loaded into the server, which takes and stores events', async (t) => {
  const server = await start(t)
  t.match(mapped(server.pid), /libjemalloc\.so\.2/, 'jemalloc is mapped into the node process')
  const env = environ(server.pid)
  t.match(env.get('LD_PRELOAD'), /libjemalloc\.so\.2$/)
  t.equal(env.get('MALLOC_CONF'), 'narenas:2,background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:5000')
  const sent = await postJson(`${server.url}/e/k`, { name: 'start/jemalloc', id: 'start-1', data: { n: 1 } })
  t.equal(sent.status, 200)
  const stored = await eventually(async () => {
    const got = await getJson(`${server.url}/v1/events/${sent.body.ids[0]}`)
    return got.status === 200 ? got.body : undefined
  })
  t.match(stored, { data: { name: 'start/jemalloc', id: 'start-1', data: { n: 1 } } })
})

t.test("SLUICE_MALLOC=glibc keeps glibc's malloc, with two arenas", async (t) => {
  const server = await start(t, { SLUICE_MALLOC: 'glibc' })
  t.notMatch(mapped(server.pid), /libjemalloc/)
  t.equal(environ(server.pid).get('MALLOC_ARENA_MAX'), '2')
  t.equal((await getJson(`${server.url}/healthz`)).status, 200)
})

t.test('an LD_PRELOAD of your own is left as it is', async (t) => {
  const jemalloc = /\S*libjemalloc\.so\.2/.exec(mapped((await start(t)).pid))![0]
  const server = await start(t, { LD_PRELOAD: jemalloc, MALLOC_CONF: 'narenas:1' })
  t.equal(environ(server.pid).get('LD_PRELOAD'), jemalloc)
  t.equal(environ(server.pid).get('MALLOC_CONF'), 'narenas:1', 'and your MALLOC_CONF')
})
