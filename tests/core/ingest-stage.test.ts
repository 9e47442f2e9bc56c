// The ingest stage on its own (fastify inject, an in-process Output): 503 when the log
// cannot take records or the pipeline stays behind, and nothing acknowledged that was not published.
import t from 'tap'
import { join } from 'node:path'
import pino from 'pino'
import { createHttpServer } from '../../api/http.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createIngest } from '../../ingest/index.ts'
import type { Output } from '../../bus/output.ts'
import type { EventRecord } from '../../core/event.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { createRocksControlStore } from '../../control/rocksdb.ts'
import { createEnvs } from '../../control/envs.ts'
import { createKeys } from '../../control/keys.ts'
import { tempDir, removeDir } from '../helpers/server.ts'

class SwitchableOutput implements Output<EventRecord> {
  published: EventRecord[] = []
  failing = false
  /** Throws from publish itself, as a codec that cannot encode a record does, rather than rejecting. */
  throwing = false
  publish(values: EventRecord[]): Promise<void> {
    if (this.throwing) throw new Error('record cannot be encoded')
    if (this.failing) return Promise.reject(new Error('broker unreachable'))
    this.published.push(...values)
    return Promise.resolve()
  }
}

const dir = await tempDir()
const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
t.teardown(async () => {
  await rocks.close()
  await removeDir(dir)
})
const envs = createEnvs(await createRocksControlStore(rocks))
const keys = createKeys(await createRocksControlStore(rocks), envs)
const output = new SwitchableOutput()
const log = pino({ level: 'silent' })
let pipelineSettles = true // what the log's settle answers (bus/local.ts: the stages after ingest within their backlog)
let settleCalls = 0
const settle = async () => {
  settleCalls++
  return pipelineSettles
}
const ingest = createIngest(
  { keys, envs, outputs: { incoming: output }, checkEvents: () => ({ kind: 'ok' }), settle, log },
  {
    devMode: true,
    maxBodyBytes: 512 * 1024,
    maxEventsPerSecond: 0,
    maxBodyCeilingBytes: 1 << 20,
    maxEvents: 5000,
    maxJsonDepth: 64,
    maxNameLength: 256,
    maxIdLength: 512,
  },
)
const { app } = createHttpServer(
  {
    host: '127.0.0.1',
    port: 0,
    trustProxy: false,
    eventLimits: { maxEvents: 5000, maxJsonDepth: 64, maxNameLength: 256, maxIdLength: 512 },
    limits: DEFAULTS,
  },
  log,
  [ingest.routes],
)
t.teardown(() => app.close())

t.test('503 LOG_UNAVAILABLE when the log rejects the records; 200 again once it takes them', async (t) => {
  output.failing = true
  const down = await app.inject({ method: 'POST', url: '/e/k', payload: { name: 'a/b', data: {} } })
  t.equal(down.statusCode, 503)
  t.equal(down.headers['retry-after'], '1', 'a 503 says when to come back')
  t.same(down.json(), {
    status: 503,
    code: 'LOG_UNAVAILABLE',
    error: 'the event log cannot take records right now; retry',
  })
  t.equal(output.published.length, 0)
  output.failing = false
  const up = await app.inject({ method: 'POST', url: '/e/k', payload: { name: 'a/b', data: {} } })
  t.equal(up.statusCode, 200)
  t.same(
    output.published.map((e) => e.internalId),
    up.json().ids,
  )
})

t.test('503 LOG_UNAVAILABLE too when the output throws rather than rejects', async (t) => {
  output.throwing = true
  t.teardown(() => {
    output.throwing = false
  })
  const down = await app.inject({ method: 'POST', url: '/e/k', payload: { name: 'a/b', data: {} } })
  t.equal(down.statusCode, 503)
  t.equal(down.json().code, 'LOG_UNAVAILABLE')
})

t.test('records are keyed for dedup: the dedup id is the caller id, else the internal id', async (t) => {
  output.published = []
  const r = await app.inject({
    method: 'POST',
    url: '/e/k',
    payload: [
      { name: 'a/b', data: {}, id: 'mine' },
      { name: 'a/c', data: {} },
    ],
  })
  const [first, second] = output.published
  t.equal(first.id, 'mine')
  t.equal(second.id, r.json().ids[1])
  t.equal(first.env, 'production')
})

t.test(
  '503 PIPELINE_BEHIND with Retry-After when the stages after ingest stay behind; nothing is published',
  async (t) => {
    output.published = []
    pipelineSettles = false
    t.teardown(() => {
      pipelineSettles = true
    })
    const calls = settleCalls
    const behind = await app.inject({ method: 'POST', url: '/e/k', payload: [{ name: 'a/b', data: {} }] })
    t.equal(behind.statusCode, 503)
    t.equal(behind.headers['retry-after'], '1')
    t.same(behind.json(), {
      status: 503,
      code: 'PIPELINE_BEHIND',
      error: 'events: the pipeline is behind; retry in 1 s',
    })
    t.equal(settleCalls, calls + 1, 'the request waited on the pipeline')
    t.equal(output.published.length, 0)
    const invalid = await app.inject({ method: 'POST', url: '/e/k', payload: [{ name: '', data: {} }] })
    t.equal(invalid.statusCode, 400, 'a request that is not valid is refused as such, without waiting')
    t.equal(settleCalls, calls + 1)
    pipelineSettles = true
    const caughtUp = await app.inject({ method: 'POST', url: '/e/k', payload: [{ name: 'a/b', data: {} }] })
    t.equal(caughtUp.statusCode, 200)
    t.equal(output.published.length, 1)
  },
)
