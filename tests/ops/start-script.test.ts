// `npm start` (scripts/start.sh) runs the Dev Server on jemalloc when it is installed, as the image
// does: under glibc's malloc RSS steps up at RocksDB's first large compaction (docs/operations.md,
// "Allocator"). provision.sh installs Debian's libjemalloc2, so the library is there to be found.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
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
  t.equal(env.get('MALLOC_CONF'), 'narenas:2,background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0')
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

// ldconfig's tag of this machine's libraries, as start.sh knows it.
const arch = ({ x64: 'x86-64', arm64: 'AArch64' } as Record<string, string>)[process.arch]
const skip = arch ? false : `start.sh knows no ldconfig tag for ${process.arch}`

t.test(
  "on a multilib host, the jemalloc of the machine's architecture, not the first one listed",
  { skip },
  async (t) => {
    const ldconfig = (path: string) =>
      execFileSync(path, ['-p'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    const cache = (() => {
      try {
        return ldconfig('ldconfig')
      } catch {
        return ldconfig('/sbin/ldconfig')
      }
    })()
    const native = cache.split('\n').find((line) => line.includes('libjemalloc.so.2 ') && line.includes(`,${arch})`))
    t.ok(native, 'provision.sh installed libjemalloc2')
    // What `ldconfig -p` prints where the i386 package is installed too: its line comes first.
    const bin = await tempDir()
    t.teardown(() => removeDir(bin))
    const fake = join(bin, 'ldconfig')
    writeFileSync(
      fake,
      `#!/bin/sh\nprintf '%s\\n' '2 libs found in cache' '\tlibjemalloc.so.2 (libc6) => /usr/lib/i386-linux-gnu/libjemalloc.so.2' '${native}'\n`,
    )
    chmodSync(fake, 0o755)
    const server = await start(t, { PATH: `${bin}:${process.env.PATH}` })
    t.equal(environ(server.pid).get('LD_PRELOAD'), native!.split(' => ')[1])
    t.match(mapped(server.pid), /libjemalloc\.so\.2/, 'and it is loaded')
  },
)
