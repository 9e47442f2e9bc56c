// Acknowledgements durable to the disk, proven from the system calls (README, "Durability"): an
// embedded server runs under strace while single events, 50- and 500-event batches, webhook
// requests, control-plane changes and a function's `step.sendEvent` flow, and no answer (nor the
// function's call to the outside after its sendEvent) leaves before an fdatasync of the WAL file
// holding its write has returned. Each request carries a marker found in the WAL write; each comes
// on a connection of its own, whose port names the socket its answer leaves by. With durability
// `off` (the sync skipped), the same check must fail.
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventually, ROOT, tempDir } from '../helpers/server.ts'
import { spawnSluice } from './sluice-process.ts'
import { type Ack, checkAcks, onConnection, parseTrace } from './syscall-trace.ts'

t.setTimeout(300_000)
const STRACE = [
  'strace',
  '-f',
  '-tt',
  '-yy',
  // A 500-event batch's WAL write, whole: a marker may sit anywhere in it.
  '-s',
  String(8 * 1024 * 1024),
  '-e',
  'trace=write,writev,pwrite64,fdatasync,fsync,sendto,sendmsg',
]
const FUNCTIONS = join(ROOT, 'tests/ops/fixtures/durable-functions.ts')

let serial = 0
const token = () => `M${process.pid}x${++serial}x${Math.random().toString(36).slice(2, 8)}`

/** A POST on a connection of its own: its answer, and the client port that names it in the trace. */
function post(url: string, body: unknown): Promise<{ status: number; port: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } })
    let port = 0
    req.on('socket', (socket) => socket.on('connect', () => (port = socket.localPort!)))
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, port, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

async function tracedRun(t: Test, durability: 'always' | 'off') {
  const dir = await tempDir('sluice-durable-ack-')
  const traceFile = join(dir, 'trace.txt')
  const told = new Set<string>()
  const callback = createServer((req, res) => {
    told.add(new URL(req.url!, 'http://x').searchParams.get('marker')!)
    res.end('ok')
  })
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve))
  const callbackPort = (callback.address() as AddressInfo).port
  const sluice = spawnSluice(
    ['dev', '--port', '0', '--data-dir', join(dir, 'data'), '--functions', FUNCTIONS],
    // 1 MiB memtables: RocksDB moves to a new WAL file several times during the run.
    { SLUICE_DURABILITY: durability, SLUICE_ROCKSDB_WRITE_BUFFER_MB: '1' },
    [...STRACE, '-o', traceFile, '--'],
  )
  // strace's child is the server: stopped by its own signal, strace then ends with it.
  const stop = () => {
    const pid = Number(readFileSync(`/proc/${sluice.child.pid}/task/${sluice.child.pid}/children`, 'utf8').trim())
    if (pid) process.kill(pid, 'SIGTERM')
    return sluice.exited
  }
  t.teardown(async () => {
    if (sluice.child.exitCode === null) await stop()
    callback.close()
  })
  const url = await sluice.up(120_000)
  const acks: Ack[] = []
  const send = async (label: string, path: string, body: unknown, marker: string, status = 200) => {
    const answer = await post(`${url}${path}`, body)
    t.equal(answer.status, status, `${label}: ${status}`)
    acks.push({ label, marker, answer: onConnection(answer.port, `HTTP/1.1 ${status}`) })
    return answer.body
  }
  const batch = (size: number, marker: string) =>
    Array.from({ length: size }, (_, i) => ({
      name: 'durable/batch',
      data: i === 0 ? { marker } : { i, pad: 'x'.repeat(400) },
    }))

  // Concurrent requests, so that syncs are shared by groups of writes.
  await Promise.all(
    Array.from({ length: 16 }, (_, i) => {
      const marker = token()
      return send(`single ${i}`, '/e/k', { name: 'durable/single', data: { marker } }, marker)
    }),
  )
  await Promise.all(
    Array.from({ length: 6 }, (_, i) => {
      const marker = token()
      return send(`50-event batch ${i}`, '/e/k', batch(50, marker), marker)
    }),
  )
  // Three rounds of three, ~2 MB of events written once each (one-pass/index.ts): the store's 0.5 MiB
  // memtable fills several times, and RocksDB moves to a new WAL file with each.
  for (let round = 0; round < 3; round++)
    await Promise.all(
      Array.from({ length: 3 }, (_, i) => {
        const marker = token()
        return send(`500-event batch ${round}.${i}`, '/e/k', batch(500, marker), marker)
      }),
    )
  const envName = token().toLowerCase()
  await send('control: an environment', '/v1/envs', { name: envName }, envName, 201)
  const hookName = token()
  const hook = await send('control: a webhook', '/v1/webhooks', { name: hookName }, hookName, 201)
  await Promise.all(
    Array.from({ length: 6 }, (_, i) => {
      const marker = token()
      return send(`webhook request ${i}`, `/e/${hook.data.id}`, { marker }, marker)
    }),
  )
  const sent: string[] = []
  for (let i = 0; i < 3; i++) {
    const marker = token()
    const data = { token: marker, callback: `http://127.0.0.1:${callbackPort}/told` }
    await send(`trigger ${i}`, '/e/k', { name: 'durable/trigger', data }, marker)
    sent.push(`sent${marker}`)
  }
  // The function's call out, after its sendEvent: the sent event's write must be synced before it.
  for (const marker of sent)
    acks.push({
      label: `step.sendEvent ${marker}`,
      marker,
      answer: (c) => c.fd.endsWith(`->127.0.0.1:${callbackPort}]`) && c.args.includes(marker),
    })
  await eventually(async () => (sent.every((m) => told.has(m)) ? true : undefined), 60_000, 100)

  await stop()
  const calls = parseTrace(await readFile(traceFile, 'utf8'))
  const wals = new Set(calls.filter((c) => /\/\d+\.log$/.test(c.fd)).map((c) => c.fd))
  return { acks, wals, ...checkAcks(calls, acks) }
}

t.test('strace is there to prove it (tests/infra/provision.sh installs it)', async (t) => {
  t.equal(spawnSync('strace', ['-V']).status, 0)
})

t.test('durability always: no answer leaves before an fdatasync of the WAL file holding its write', async (t) => {
  const { acks, problems, syncedAt, wals } = await tracedRun(t, 'always')
  t.equal(acks.length, 16 + 6 + 9 + 2 + 6 + 3 + 3, 'every kind of acknowledgement was checked')
  t.same(problems, [], 'each one synced before it left')
  t.ok(wals.size > 1, `${wals.size} WAL files written: synced across RocksDB's moves to a new one`)
  const singles = new Set([...syncedAt].filter(([label]) => label.startsWith('single')).map(([, line]) => line))
  t.ok(singles.size < 16, `16 concurrent single events covered by ${singles.size} syncs: one per group of writes`)
})

t.test('durability off (the sync skipped): the same check finds answers that left unsynced', async (t) => {
  const { acks, problems } = await tracedRun(t, 'off')
  t.ok(problems.length >= acks.length / 2, `${problems.length} of ${acks.length} unsynced`)
  t.ok(
    problems.some((p) => p.startsWith('single')) && problems.some((p) => p.startsWith('step.sendEvent')),
    'among them single events and a sendEvent',
  )
})
