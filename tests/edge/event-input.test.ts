// Defect 4 and the `ts` and `id` items of defect 7 of issue 9: different IDs are never merged
// by an encoding accident, and `ts` is a time a Date holds. For Event API events and for
// what a webhook transform returns (both go through core/event.ts).
import t from 'tap'
import { eventProblem, MAX_DATE_MS } from '../../core/event.ts'
import { startServer, getJson, eventually } from '../helpers/server.ts'
import { createWebhook, deliver, outcome } from '../webhooks/helpers.ts'

const limits = { maxNameLength: 256, maxIdLength: 512 }

t.test('lone surrogates in id or name are refused, naming the field; well-formed text passes', async (t) => {
  for (const lone of ['k\ud800', 'k\udbff', '\udc00k', 'a\ud800\ud800b']) {
    t.equal(
      eventProblem({ name: 'a/b', data: {}, id: lone }, limits),
      '.id: not well-formed Unicode (a lone surrogate such as \\ud800)',
    )
    t.equal(
      eventProblem({ name: `a/${lone}`, data: {} }, limits),
      '.name: not well-formed Unicode (a lone surrogate such as \\ud800)',
    )
  }
  t.equal(eventProblem({ name: 'a/😀', data: {}, id: 'k\ufffd😀中' }, limits), undefined)
})

t.test('ts is at most the last time a Date holds', async (t) => {
  t.equal(MAX_DATE_MS, new Date(8.64e15).getTime())
  t.equal(eventProblem({ name: 'a/b', data: {}, ts: MAX_DATE_MS }, limits), undefined)
  t.equal(
    eventProblem({ name: 'a/b', data: {}, ts: MAX_DATE_MS + 1 }, limits),
    '.ts: after the last time a Date holds (8640000000000000 ms, year 275760)',
  )
  t.equal(eventProblem({ name: 'a/b', data: {}, ts: Number.MAX_SAFE_INTEGER }, limits)?.startsWith('.ts:'), true)
})

t.test('over HTTP', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const post = async (body: string | Uint8Array) => {
    const response = await fetch(`${server.url}/e/k`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    })
    return { status: response.status, body: await response.json() }
  }

  t.test(
    '"k\\ud800", "k\\udbff" and "k\\ufffd" are not merged: the first two are refused, the third is accepted',
    async (t) => {
      for (const escaped of ['k\\ud800', 'k\\udbff']) {
        const r = await post(`{"name":"a/b","data":{},"id":"${escaped}"}`)
        t.same(r, {
          status: 400,
          body: {
            status: 400,
            code: 'EVENT_INVALID',
            error: 'events[0].id: not well-formed Unicode (a lone surrogate such as \\ud800)',
          },
        })
      }
      const accepted = await post('{"name":"a/b","data":{},"id":"k\\ufffd"}')
      t.equal(accepted.status, 200)
      const stored = await eventually(async () => {
        const r = await getJson(`${server.url}/v1/events/${accepted.body.ids[0]}`)
        return r.status === 200 ? r.body.data : undefined
      })
      t.equal(stored.id, 'k\ufffd')
    },
  )

  t.test('raw bytes that are not UTF-8 are refused, never turned into U+FFFD', async (t) => {
    for (const byte of [0xff, 0xfe, 0xc0]) {
      const body = Buffer.concat([
        Buffer.from('{"name":"a/b","data":{},"id":"k'),
        Buffer.from([byte]),
        Buffer.from('"}'),
      ])
      t.same(await post(body), {
        status: 400,
        body: { status: 400, code: 'JSON_INVALID', error: 'body: not valid UTF-8' },
      })
    }
  })

  t.test(
    'a lone surrogate in a REST body is refused too, and a ts past a Date is refused with the reason',
    async (t) => {
      const far = await post(`{"name":"a/b","data":{},"ts":${MAX_DATE_MS + 1}}`)
      t.same([far.status, far.body.code], [400, 'EVENT_INVALID'])
      t.match(far.body.error, /^events\[0\]\.ts: after the last time a Date holds/)
      const rest = await fetch(`${server.url}/v1/envs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Uint8Array([0x7b, 0xff, 0x7d]),
      })
      t.same(await rest.json(), { status: 400, code: 'JSON_INVALID', error: 'body: not valid UTF-8' })
    },
  )

  t.test('a transform that returns a lone surrogate id is dead-lettered naming the field', async (t) => {
    const hook = await createWebhook(server.url, {
      name: 'Lone',
      transform: 'function transform(evt) { return { name: "a/b", data: {}, id: "k" + String.fromCharCode(0xd800) } }',
    })
    const sent = await deliver(hook.url, { any: 1 })
    t.equal(sent.status, 200)
    const failed = await outcome(server.url, hook.id, sent.body.request_id)
    t.same([failed.status, failed.error.code], ['failed', 'TRANSFORM_INVALID_EVENT'])
    t.match(failed.error.message, /\.id: not well-formed Unicode/)
  })
})
