// Defect 1 of issue 9: the key, the environment and its body limit are checked before the
// body is read, and reading stops at that limit. Endless chunked bodies over a raw socket.
import t from 'tap'
import { startServer, TEST_SIGNING_KEY, postJson } from '../helpers/server.ts'
import { rawConnect, sleep, withTimeout, type RawConnection } from '../helpers/raw-http.ts'
import { change, scrape, scrapeUntil } from '../ops/metrics-scrape.ts'

const server = await startServer({ mode: 'start' })
t.teardown(() => server.stop())
const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
const key = (await postJson(`${server.url}/v1/keys`, { env: 'production' }, auth)).body.data.key as string
const hook = (await postJson(`${server.url}/v1/webhooks`, { name: 'Limits' }, auth)).body.data
const LIMIT = 512 * 1024
const CHUNK = Buffer.alloc(64 * 1024, 'a')
const chunk = Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')])

/** A chunked POST that streams until answered (at most `maxBytes`) and never sends its last chunk. */
async function endlessChunked(path: string, maxBytes = 256 * 1024 * 1024) {
  const connection = await rawConnect(server.url)
  connection.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  )
  let sent = 0
  let answered = false
  connection.response.then(
    () => {
      answered = true
    },
    () => {
      answered = true
    },
  )
  void (async () => {
    while (!answered && !connection.socket.destroyed && sent < maxBytes) {
      sent += CHUNK.length
      if (!connection.write(chunk))
        await new Promise((resolve) => {
          connection.socket.once('drain', resolve)
          connection.socket.once('close', resolve)
        })
    }
  })()
  return connection
}

async function answer(connection: RawConnection) {
  const response = await withTimeout(connection.response, 5000, 'answer')
  await withTimeout(connection.closed, 5000, 'connection closed by the server')
  return response
}

/** A chunked POST whose body is `bytes` so far, with no last chunk: the server cannot have read to its end. */
async function openChunked(path: string, chunks: number) {
  const connection = await rawConnect(server.url)
  connection.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  )
  for (let i = 0; i < chunks; i++) connection.write(chunk)
  return connection
}

t.test('a wrong key is answered 401 at once, with the body unfinished, and the connection is closed', async (t) => {
  const response = await answer(await openChunked('/e/not-a-key', 1))
  t.same(
    [response.status, response.json],
    [401, { status: 401, code: 'KEY_INVALID', error: 'event key: unknown or revoked' }],
  )
  t.equal(response.headers.connection, 'close')
})

t.test('an unknown webhook ID is answered 404 at once', async (t) => {
  const response = await answer(await openChunked('/e/wh_doesnotexist', 1))
  t.same([response.status, response.json.code], [404, 'NOT_FOUND'])
})

t.test(
  'a good key: the body is read up to the environment limit, and 413 comes with the first byte past it',
  async (t) => {
    const connection = await openChunked(`/e/${key}`, LIMIT / CHUNK.length)
    const early = await Promise.race([connection.response.then(() => 'answered'), sleep(500).then(() => 'waiting')])
    t.equal(early, 'waiting', 'exactly the limit is not over it: the server waits for the rest')
    connection.write(chunk)
    t.same((await answer(connection)).json, {
      status: 413,
      code: 'BODY_TOO_LARGE',
      error: `body: over ${LIMIT} bytes, the limit for environment "production" is ${LIMIT}`,
    })
  },
)

t.test('a webhook URL is cut at its limit too', async (t) => {
  const connection = await endlessChunked(new URL(hook.url).pathname)
  t.same((await answer(connection)).json.code, 'BODY_TOO_LARGE')
})

t.test('a Content-Length over the limit is refused before a byte of the body is sent', async (t) => {
  const connection = await rawConnect(server.url)
  connection.write(`POST /e/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${LIMIT + 1}\r\n\r\n`)
  const response = await answer(connection)
  t.same([response.status, response.json.code], [413, 'BODY_TOO_LARGE'])
})

t.test('Expect: 100-continue: a wrong key is refused before the client is invited to send the body', async (t) => {
  const head = (key: string) =>
    `POST /e/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 24\r\n\r\n`
  const refused = await rawConnect(server.url)
  refused.write(head('not-a-key'))
  const response = await answer(refused)
  t.equal(response.status, 401)
  t.notMatch(refused.received().toString(), /100 Continue/, 'no invitation to send the body')
  const admitted = await rawConnect(server.url)
  admitted.write(head(key))
  await withTimeout(
    (async () => {
      while (!admitted.received().toString().includes('100 Continue')) await sleep(10)
    })(),
    3000,
    '100 Continue',
  )
  admitted.write('{"name":"a/b","data":{}}')
  await withTimeout(
    (async () => {
      while (!/HTTP\/1.1 200/.test(admitted.received().toString())) await sleep(10)
    })(),
    3000,
    '200',
  )
  admitted.socket.destroy()
  t.pass('invited after the key passed, then accepted')
})

t.test(
  'a sender that leaves mid-body: the request ends refused (REQUEST_INVALID), and the next is served',
  async (t) => {
    const abandoned = { api: 'event', env: 'production', code: 'REQUEST_INVALID' }
    const before = await scrape(server.opsUrl!)
    const connection = await rawConnect(server.url)
    connection.write(
      `POST /e/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{"name":"a/b","data":{`,
    )
    await sleep(100) // the server has admitted it and is reading its body
    connection.socket.destroy()
    // A body read that waited on for the rest would never end: nothing counted, the request held.
    await scrapeUntil(
      server.opsUrl!,
      (s) => change(before, s, 'sluice_ingest_requests_rejected_total', abandoned) === 1,
      5000,
      'the abandoned request counted',
    )
    const next = await postJson(`${server.url}/e/${key}`, { name: 'a/b', data: {} })
    t.equal(next.status, 200)
  },
)

t.test('16 endless streams do not grow the server by what they stream', async (t) => {
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  const streams = await Promise.all(
    Array.from({ length: 16 }, (_, i) => endlessChunked(i % 2 ? `/e/${key}` : '/e/wrong', 16 * 1024 * 1024)),
  )
  const statuses = await Promise.all(streams.map(async (s) => (await answer(s)).status))
  const grown = process.memoryUsage().rss - before
  t.same(statuses.sort(), [...Array(8).fill(401), ...Array(8).fill(413)])
  // 16 × 16 MiB would be 256 MiB buffered before the fix.
  t.ok(grown < 64 * 1024 * 1024, `RSS grew ${(grown / 1048576).toFixed(1)} MiB`)
})
