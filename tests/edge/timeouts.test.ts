// Defect 5 of issue 9: slow bodies and slow headers are cut off, idle keep-alive connections
// closed, and connections past the cap refused. Short limits set by flags, over raw sockets.
import t from 'tap'
import { startServer } from '../helpers/server.ts'
import { rawConnect, rawRequest, sleep, withTimeout } from '../helpers/raw-http.ts'

const server = await startServer({
  flags: {
    requestTimeoutMs: '1500',
    headersTimeoutMs: '1000',
    keepAliveTimeoutMs: '500',
    socketIdleTimeoutMs: '5000',
    maxConnections: '20',
  },
})
t.teardown(() => server.stop())

/** Writes `bytes` one at a time every `everyMs` until the server closes the connection; resolves with how long that took. */
async function trickle(head: string, bytes: string, everyMs: number) {
  const connection = await rawConnect(server.url)
  const started = Date.now()
  connection.write(head)
  void (async () => {
    for (const byte of bytes) {
      if (connection.socket.destroyed) return
      connection.write(byte)
      await sleep(everyMs)
    }
  })()
  await withTimeout(connection.closed, 10_000, 'the server closing the connection')
  return { afterMs: Date.now() - started, response: await connection.response.catch(() => undefined) }
}

t.test('a body trickled at 1 byte per 200 ms is cut off at the request timeout with 408', async (t) => {
  const { afterMs, response } = await trickle(
    `POST /e/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n`,
    '{'.padEnd(1000, ' '),
    200,
  )
  t.ok(afterMs < 4000, `closed after ${afterMs} ms (limit 1500 ms, checked every second)`)
  t.same(response?.json, { status: 408, code: 'REQUEST_TIMEOUT', error: 'request: not received in time' })
})

t.test(
  'a request timeout shorter than the headers timeout still cuts a slow body at the request timeout',
  async (t) => {
    const short = await startServer({ flags: { requestTimeoutMs: '1500' } })
    t.teardown(() => short.stop())
    const connection = await rawConnect(short.url)
    const started = Date.now()
    connection.write('POST /e/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{')
    const trickle = setInterval(() => connection.write(' '), 200)
    await withTimeout(connection.closed, 8000, 'close')
    clearInterval(trickle)
    t.ok(
      Date.now() - started < 4000,
      `closed after ${Date.now() - started} ms (request timeout 1500 ms, headers timeout 10 s)`,
    )
    t.equal((await connection.response).json.code, 'REQUEST_TIMEOUT')
  },
)

t.test('headers trickled one byte at a time are cut off at the headers timeout', async (t) => {
  const { afterMs, response } = await trickle(
    '',
    'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '.padEnd(400, 'x'),
    100,
  )
  t.ok(afterMs < 3500, `closed after ${afterMs} ms (limit 1000 ms)`)
  t.equal(response?.json.code, 'REQUEST_TIMEOUT')
})

t.test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const connection = await rawConnect(server.url)
  connection.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  t.equal((await connection.response).status, 200)
  const started = Date.now()
  await withTimeout(connection.closed, 5000, 'keep-alive close')
  t.ok(Date.now() - started < 2500, `closed after ${Date.now() - started} ms idle (limit 500 ms)`)
})

t.test('connections past the cap are refused while the others are served', async (t) => {
  const held = await Promise.all(Array.from({ length: 20 }, () => rawConnect(server.url)))
  t.teardown(() => {
    for (const c of held) c.socket.destroy()
  })
  await sleep(100)
  const refused = await rawConnect(server.url)
  refused.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  await t.rejects(withTimeout(refused.response, 3000, 'the 21st connection'), /closed without a response/)
  for (const c of held) c.socket.destroy()
  await sleep(100)
  t.equal(
    (await rawRequest(server.url, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')).status,
    200,
    'served again once below the cap',
  )
})

t.test('the defaults are set when no flag is given', async (t) => {
  const { loadConfig } = await import('../../config/config.ts')
  t.match(loadConfig('dev', {}, {}), {
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 10_000,
    keepAliveTimeoutMs: 72_000,
    socketIdleTimeoutMs: 120_000,
    maxConnections: 10_000,
  })
  t.match(loadConfig('dev', {}, { SLUICE_REQUEST_TIMEOUT_MS: '5000', SLUICE_MAX_CONNECTIONS: '7' }), {
    requestTimeoutMs: 5000,
    maxConnections: 7,
  })
})
