// A power cut, simulated (docs/operations.md, "Durability"): `sluice dev` on a FUSE file system
// (cutfs.py) that holds every write in memory until it is synced; load with single events and
// batches while recording every acknowledged ID; kill -9, then "cut the power" (unmount: only the
// synced state reaches the backing dir); start sluice on the backing dir and look for each ID.
// Once per SLUICE_DURABILITY. Root and /dev/fuse needed; installs fusepy when missing.
// Run: node --no-node-snapshot --conditions=sluice-source bench/power-cut/run.ts [seconds]
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT, report, startChild, type Child } from '../lib.ts'

const SECONDS = Number(process.argv[2] ?? 15)
const PYTHON = '/usr/bin/python3'
const NAME = 'cut/event'

function provision(): void {
  try {
    execFileSync(PYTHON, ['-c', 'import fusepy'], { stdio: 'ignore' })
  } catch {
    execFileSync('apt-get', ['install', '-y', 'python3-fusepy', 'fuse', 'libfuse2'], { stdio: 'inherit' })
  }
}

/** Mounts cutfs on `mount`; `cut()` unmounts and resolves with its stats once BACKING holds the synced state. */
async function mountCutFs(mount: string, backing: string) {
  const fs = spawn(PYTHON, [join(ROOT, 'bench/power-cut/cutfs.py'), mount, backing], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: fs.stdout! })[Symbol.asyncIterator]()
  const first = await lines.next()
  if (first.done || !JSON.parse(first.value).mounted) throw new Error('cutfs did not mount')
  return {
    async cut(): Promise<Record<string, number>> {
      execFileSync('umount', [mount])
      const stats = await lines.next()
      if (stats.done) throw new Error('cutfs exited without writing the synced state')
      return JSON.parse(stats.value)
    },
  }
}

function sluice(dataDir: string, durability: string): Promise<Child> {
  const args = [join(ROOT, 'bin/sluice.js'), 'dev', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn']
  return startChild(args, { SLUICE_DURABILITY: durability, SLUICE_LOG_LEVEL: 'warn' })
}

/** A worker posting `batchSize` events per request until `stopped()`; every ID of a 200 goes into `acked`. */
async function load(url: string, batchSize: number, stopped: () => boolean, acked: Set<string>): Promise<void> {
  while (!stopped()) {
    const events = Array.from({ length: batchSize }, (_, i) => ({ name: NAME, data: { i } }))
    try {
      const res = await fetch(`${url}/e/k`, {
        method: 'POST',
        body: JSON.stringify(batchSize === 1 ? events[0] : events),
        headers: { 'content-type': 'application/json' },
      })
      if (res.status !== 200) continue
      for (const id of ((await res.json()) as { ids: string[] }).ids) acked.add(id)
    } catch {
      // killed under this request: not acknowledged
    }
  }
}

async function storedIds(url: string): Promise<Set<string>> {
  const ids = new Set<string>()
  let cursor: string | null = null
  do {
    const query = `name=${NAME}&include_duplicates=true&limit=1000${cursor ? `&cursor=${cursor}` : ''}`
    const page = (await (await fetch(`${url}/v1/events?${query}`)).json()) as {
      data: Array<{ internal_id: string }>
      metadata: { cursor: string | null }
    }
    for (const e of page.data) ids.add(e.internal_id)
    cursor = page.metadata.cursor
  } while (cursor)
  return ids
}

/** `dbDirSynced`: `db` made and its entry synced before the start, so a loss is the WAL's alone. */
async function round(durability: string, dbDirSynced: boolean) {
  const base = await mkdtemp(join(tmpdir(), 'sluice-power-cut-'))
  const [mount, backing] = [join(base, 'mnt'), join(base, 'disk')]
  execFileSync('mkdir', ['-p', mount])
  const fs = await mountCutFs(mount, backing)
  // A failure before the cut leaves no mount behind (lazily: the server may still hold it).
  const unmount = () => spawnSync('umount', ['-l', mount])
  process.once('exit', unmount)
  if (dbDirSynced) {
    await mkdir(join(mount, 'db'))
    const dir = await open(mount, 'r')
    await dir.sync().finally(() => dir.close())
  }
  const first = await sluice(mount, durability)
  const acked = new Set<string>()
  let killed = false
  // Single events on 8 connections, 50-event batches on 4 (fetch keeps a connection per worker).
  const workers = [...Array.from({ length: 8 }, () => 1), ...Array.from({ length: 4 }, () => 50)]
  const running = workers.map((size) => load(first.url, size, () => killed, acked))
  await sleep(SECONDS * 1000)
  const exited = new Promise((r) => first.child.once('exit', r))
  first.child.kill('SIGKILL')
  killed = true
  await exited
  await Promise.all(running) // the requests in flight fail: not acknowledged
  const fsStats = await fs.cut()
  process.off('exit', unmount)

  const second = await sluice(backing, durability)
  // The store may trail the log after a restart: look until all are there or the count stops growing.
  let stored = new Set<string>()
  for (let still = 0, t0 = Date.now(); still < 10 && Date.now() - t0 < 60_000; await sleep(500)) {
    const now = await storedIds(second.url)
    still = now.size === stored.size ? still + 1 : 0
    stored = now
    if ([...acked].every((id) => stored.has(id))) break
  }
  await second.stop()
  await rm(base, { recursive: true, force: true })
  const lost = [...acked].filter((id) => !stored.has(id))
  return {
    durability,
    dbDir: dbDirSynced ? 'synced first' : 'fresh',
    seconds: SECONDS,
    acknowledged: acked.size,
    stored: stored.size,
    lost: lost.length,
    fsyncs: fsStats.fsync,
    dirSyncs: fsStats.fsyncdir,
    mbWritten: (fsStats.bytesWritten / 2 ** 20).toFixed(1),
    mbDropped: (fsStats.bytesDropped / 2 ** 20).toFixed(1),
    entriesDropped: fsStats.entriesDropped,
  }
}

provision()
const rows = []
for (const dbDirSynced of [false, true]) {
  for (const durability of ['always', 'off']) rows.push(await round(durability, dbDirSynced))
}
report('power-cut', rows)
