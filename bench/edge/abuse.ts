// bench/edge: what unauthenticated and oversized abuse costs a `sluice start` server (issue 9,
// defects 1 and 5). Endless chunked bodies (half with a wrong key, half with a good one) and
// slowly trickled bodies, from raw sockets; the server's RSS from /proc and when each
// connection was answered and closed.
import { connect, type Socket } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { peakRssMb, report, startChild } from '../lib.ts'
import { rssMb } from '../wrk.ts'

const streams = Number(process.argv[2] ?? 16)
const perStreamMb = Number(process.argv[3] ?? 64)
const signingKey = 'bench-signing-key-0123456789'
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-edge-'))
const server = await startChild(
  [
    'bin/sluice.js',
    'start',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--log-level',
    'info',
    '--request-timeout-ms',
    '3000',
  ],
  { SLUICE_LOG_LEVEL: 'info', SLUICE_SIGNING_KEY: signingKey, MALLOC_ARENA_MAX: '2' },
)
const created = await fetch(`${server.url}/v1/keys`, {
  method: 'POST',
  headers: { authorization: `Bearer ${signingKey}`, 'content-type': 'application/json' },
  body: '{"env":"production"}',
})
const key = ((await created.json()) as { data: { key: string } }).data.key
const { hostname, port } = new URL(server.url)

interface Outcome {
  status: string
  answeredMs: number
  closedMs: number
  sentMb: number
}

/** One connection: `head`, then `next()` bytes until the server answers and closes (or `limitBytes`). */
function abuse(head: string, next: () => Buffer, limitBytes: number, pauseMs = 0): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now()
    const socket: Socket = connect({ host: hostname, port: Number(port) })
    let sent = 0
    let answeredMs = -1
    let status = 'none'
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      if (answeredMs < 0) {
        answeredMs = Date.now() - started
        status = chunk.toString('latin1').split(' ')[1]
      }
    })
    socket.once('close', () => resolve({ status, answeredMs, closedMs: Date.now() - started, sentMb: sent / 1048576 }))
    socket.once('connect', async () => {
      socket.write(head)
      while (!socket.destroyed && answeredMs < 0 && sent < limitBytes) {
        const bytes = next()
        sent += bytes.length
        if (!socket.write(bytes))
          await new Promise((r) => {
            socket.once('drain', r)
            socket.once('close', r)
          })
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs))
      }
      if (sent >= limitBytes) socket.destroy()
    })
  })
}

const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 'a'), Buffer.from('\r\n')])
const chunked = (path: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n`
const before = rssMb(server.child.pid!)
const endless = await Promise.all(
  Array.from({ length: streams }, (_, i) =>
    abuse(chunked(i % 2 ? `/e/${key}` : '/e/not-a-key'), () => chunk, perStreamMb * 1048576),
  ),
)
const afterEndless = rssMb(server.child.pid!)
const slow = await Promise.all(
  Array.from({ length: 20 }, () =>
    abuse(
      `POST /e/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n`,
      () => Buffer.from(' '),
      1000,
      500,
    ),
  ),
)
const peak = peakRssMb(server.child.pid!)
await server.stop()
await rm(dataDir, { recursive: true, force: true })

const summarise = (what: string, outcomes: Outcome[]) => {
  const by = (f: (o: Outcome) => number) => Math.max(...outcomes.map(f))
  return {
    case: what,
    connections: outcomes.length,
    statuses: [...new Set(outcomes.map((o) => o.status))].join('/'),
    'max answered ms': by((o) => o.answeredMs),
    'max closed ms': by((o) => o.closedMs),
    'max MiB sent': by((o) => o.sentMb).toFixed(1),
  }
}
report(
  'edge-abuse',
  [
    summarise(
      `endless chunked, wrong key (${perStreamMb} MiB offered each)`,
      endless.filter((_, i) => i % 2 === 0),
    ),
    summarise(
      `endless chunked, good key (${perStreamMb} MiB offered each)`,
      endless.filter((_, i) => i % 2 === 1),
    ),
    summarise('good key, 1 byte per 500 ms of 1000 (request timeout 3 s)', slow),
  ],
  { rssBeforeMb: before, rssAfterEndlessMb: afterEndless, peakRssMb: peak, targets: { rssGrowthMb: 64 } },
)
