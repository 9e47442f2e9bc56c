// core/wal-sync.ts: one sync serves the writes of a group, and a write in a WAL file RocksDB has
// since left is synced before the answer (proven from the system calls, under strace).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createWalSync } from '../../core/wal-sync.ts'
import { ROOT, tempDir } from '../helpers/server.ts'
import { checkAcks, parseTrace } from '../ops/syscall-trace.ts'

t.test('a write in each WAL file RocksDB left since the last sync is synced before the sync resolves', async (t) => {
  const dir = await tempDir('sluice-wal-sync-')
  const trace = join(dir, 'trace.txt')
  const run = spawnSync(
    'strace',
    ['-f', '-yy', '-s', '256', '-e', 'trace=write,pwrite64,fdatasync,fsync', '-o', trace, '--'].concat([
      process.execPath,
      '--conditions=sluice-source',
      join(ROOT, 'tests/core/fixtures/wal-switch.ts'),
      dir,
    ]),
    { encoding: 'utf8' },
  )
  t.equal(run.status, 0, run.stderr)
  const calls = parseTrace(readFileSync(trace, 'utf8'))
  // The fixture's stdout: a pipe or a socket pair, as the platform makes them.
  const toStdout = (text: string) => (c: { fd: string; args: string }) =>
    c.args.startsWith('1<') && c.args.includes(text)
  const acks = [
    { label: 'in the held file', marker: 'WRITE-A', answer: toStdout('synced 1') },
    { label: 'in a file between', marker: 'WRITE-B', answer: toStdout('synced 1') },
    { label: 'in the live file', marker: 'WRITE-C', answer: toStdout('synced 1') },
    { label: 'in the held file, a file between deleted', marker: 'WRITE-D', answer: toStdout('synced 2') },
    { label: 'in the live file, a file between deleted', marker: 'WRITE-E', answer: toStdout('synced 2') },
  ]
  t.same(checkAcks(calls, acks).problems, [])
  const dirSyncs = calls.filter((c) => c.name === 'fsync' && c.fd === dir).length
  t.ok(dirSyncs >= 3, `the directory synced at open and at each move to a new file (${dirSyncs})`)
  // RocksDB made the dir without syncing its parent (bench/power-cut lost every event without this).
  t.ok(
    calls.some((c) => c.name === 'fsync' && c.fd === dirname(dir)),
    'its parent synced at open',
  )
})

t.test('writes that complete while a sync runs share the next one', async (t) => {
  const dir = await tempDir('sluice-wal-sync-')
  writeFileSync(join(dir, '000007.log'), '')
  let looks = 0
  const walSync = await createWalSync(async () => {
    looks++
    return { path: '/000007.log', number: 7 }
  }, dir)
  looks = 0
  const first = walSync.sync()
  const rest = Array.from({ length: 20 }, () => walSync.sync())
  await Promise.all([first, ...rest])
  t.equal(looks, 2, '21 callers, 2 syncs: the one running, and one after it for the other 20')
  await walSync.close()
})

t.test('a sync that fails fails its callers, and the next sync runs afresh', async (t) => {
  const dir = await tempDir('sluice-wal-sync-')
  writeFileSync(join(dir, '000007.log'), '')
  let fail = false
  const walSync = await createWalSync(async () => {
    if (fail) throw new Error('EIO')
    return { path: '/000007.log', number: 7 }
  }, dir)
  fail = true
  await t.rejects(walSync.sync(), { message: 'EIO' })
  fail = false
  await walSync.sync()
  t.pass('synced again')
  await walSync.close()
})

t.test('a data dir Sluice makes has each new directory entry synced (makeDirDurable, under strace)', async (t) => {
  const dir = await tempDir('sluice-make-dir-')
  const trace = join(dir, 'trace.txt')
  const made = join(dir, 'a', 'b', 'data')
  const script = `import { makeDirDurable } from ${JSON.stringify(join(ROOT, 'core/wal-sync.ts'))}
await makeDirDurable(process.argv[1]); await makeDirDurable(process.argv[1])`
  const run = spawnSync(
    'strace',
    ['-f', '-yy', '-e', 'trace=fsync', '-o', trace, '--', process.execPath, '--input-type=module', '-e', script, made],
    { encoding: 'utf8' },
  )
  t.equal(run.status, 0, run.stderr)
  const synced = parseTrace(readFileSync(trace, 'utf8'))
    .filter((c) => c.name === 'fsync')
    .map((c) => c.fd)
  t.same(
    synced,
    [join(dir, 'a', 'b'), join(dir, 'a'), dir],
    'each parent of a new directory, once: the second call makes nothing',
  )
})
