// The client library: send, retries that never duplicate, typed 4xx errors, env and key.
import t from 'tap'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client, SluiceRequestError } from 'sluice/client'
import { startServer, getJson, eventually } from '../helpers/server.ts'

const server = await startServer()
t.teardown(() => server.stop())
const fastRetry = { initialDelayMs: 10, maxDelayMs: 50, retries: 3 }

/** Forwards to Sluice; for the first `drop` requests, Sluice gets and accepts them but the response is lost. */
async function lossyProxy(target: string, drop: number) {
  let seen = 0
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const forward = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (upstream) => {
        const body: Buffer[] = []
        upstream.on('data', (c) => body.push(c))
        upstream.on('end', () => {
          if (seen++ < drop) return void req.socket.destroy()
          res.writeHead(upstream.statusCode!, upstream.headers).end(Buffer.concat(body))
        })
      })
      forward.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    requests: () => seen,
    close: () => new Promise((r) => proxy.close(r)),
  }
}

t.test('send resolves with one ID per event', async (t) => {
  const client = new Client({ id: 'app', baseUrl: server.url })
  const { ids } = await client.send([
    { name: 'c/a', data: {} },
    { name: 'c/b', data: { n: 1 } },
  ])
  t.equal(ids.length, 2)
  const e = await eventually(async () => {
    const r = await getJson(`${server.url}/v1/events/${ids[1]}`)
    return r.status === 200 ? r.body.data : undefined
  })
  t.same(e.data, { n: 1 })
})

t.test('a lost response is retried with the same ID seed: same IDs, stored once', async (t) => {
  const proxy = await lossyProxy(server.url, 1)
  t.teardown(proxy.close)
  const client = new Client({ id: 'app', baseUrl: proxy.url, retry: fastRetry })
  const { ids } = await client.send({ name: 'c/retried', data: { once: true } })
  t.equal(proxy.requests(), 2, 'the server saw the request twice')
  await eventually(async () => ((await getJson(`${server.url}/v1/events/${ids[0]}`)).status === 200 ? true : undefined))
  await client.send({ name: 'c/sentinel', data: {} })
  await eventually(async () =>
    (await getJson(`${server.url}/v1/events?name=c/sentinel`)).body.data.length ? true : undefined,
  )
  const all = await getJson(`${server.url}/v1/events?name=c/retried&include_duplicates=true`)
  t.same(
    all.body.data.map((e: { internal_id: string }) => e.internal_id),
    ids,
    'one stored event, the one whose ID was returned',
  )
})

t.test('4xx is not retried and surfaces as SluiceRequestError with the code', async (t) => {
  const proxy = await lossyProxy(server.url, 0)
  t.teardown(proxy.close)
  const client = new Client({ id: 'app', baseUrl: proxy.url, retry: fastRetry })
  const err = await client.send({ name: '', data: {} }).catch((e) => e)
  t.ok(err instanceof SluiceRequestError)
  t.match(err, { status: 400, code: 'EVENT_INVALID', message: 'events[0].name: must be a non-empty string' })
  t.equal(proxy.requests(), 1, 'sent once')
})

t.test('a server that stays down fails after the retries, with the network error', async (t) => {
  const client = new Client({ id: 'app', baseUrl: 'http://127.0.0.1:1', retry: fastRetry })
  await t.rejects(client.send({ name: 'c/x', data: {} }), /fetch failed/)
})

t.test('the event key comes from SERVICE_EVENT_KEY when not given; env is sent as x-service-env', async (t) => {
  const seen: Array<{ url?: string; env?: string | string[] }> = []
  const spy = createServer((req, res) => {
    seen.push({ url: req.url, env: req.headers['x-service-env'] })
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ids":["X"],"status":200}')
  })
  await new Promise<void>((r) => spy.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise((r) => spy.close(r)))
  process.env.SERVICE_EVENT_KEY = 'sk_from_env'
  t.teardown(() => {
    delete process.env.SERVICE_EVENT_KEY
  })
  const client = new Client({
    id: 'app',
    baseUrl: `http://127.0.0.1:${(spy.address() as AddressInfo).port}`,
    env: 'feature-1',
  })
  t.same(await client.send({ name: 'c/x', data: {} }), { ids: ['X'] })
  t.same(seen, [{ url: '/e/sk_from_env', env: 'feature-1' }])
})

t.test('new Client needs an id', async (t) => {
  t.throws(() => new Client({} as never), /id must be a non-empty string/)
})

t.test('a 429 is retried after its Retry-After, with the same ID seed', async (t) => {
  const seeds: string[] = []
  const arrivals: number[] = []
  const limiter = createServer((req, res) => {
    seeds.push(String(req.headers['x-service-event-id-seed']))
    arrivals.push(Date.now())
    req.resume()
    if (seeds.length === 1)
      return void res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' })
        .end(JSON.stringify({ status: 429, code: 'RATE_LIMITED', error: 'slow down' }))
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ids: ['01J00000000000000000000000'], status: 200 }))
  })
  await new Promise<void>((resolve) => limiter.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((r) => limiter.close(r)))
  const client = new Client({
    id: 'app',
    baseUrl: `http://127.0.0.1:${(limiter.address() as AddressInfo).port}`,
    retry: fastRetry,
  })
  const { ids } = await client.send({ name: 'c/limited', data: {} })
  t.same(ids, ['01J00000000000000000000000'])
  t.equal(seeds.length, 2)
  t.equal(seeds[0], seeds[1], 'the same seed')
  t.ok(
    arrivals[1] - arrivals[0] >= 1000,
    `waited the Retry-After second, not the 10 ms backoff (${arrivals[1] - arrivals[0]} ms)`,
  )
})
