// Stopping the broker makes ingest answer 503 LOG_UNAVAILABLE within about a second, never a
// 200; when the broker is back, ingest recovers by itself.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { postJson, eventually } from '../helpers/server.ts'
import { startKafka } from '../infra/kafka.ts'
import { distributedEnv, startNode } from './cluster.ts'

t.setTimeout(240_000)

t.test('broker down → 503 fast; broker back → 200 again', async (t) => {
  const kafka = await startKafka({ brokers: 1 })
  t.teardown(() => kafka.stop())
  const env = distributedEnv('brokerdown', kafka.brokers)
  // A Dev Server ingest node: any event key, so the test needs no control-plane setup.
  const ingest = await startNode(['ingest'], env, [], 'dev')
  t.teardown(() => ingest.kill())
  const send = () => postJson(`${ingest.url}/e/any`, { name: 'bd/x', data: {} })
  t.equal(
    (
      await eventually(
        async () => {
          const r = await send()
          return r.status === 200 ? r : undefined
        },
        30_000,
        100,
      )
    ).status,
    200,
  )

  await kafka.stopBroker(0, { signal: 'SIGKILL' })
  const started = Date.now()
  const down = await send()
  const elapsedMs = Date.now() - started
  t.equal(down.status, 503)
  t.same(down.body, {
    status: 503,
    code: 'LOG_UNAVAILABLE',
    error: 'the event log cannot take records right now; retry',
  })
  t.ok(elapsedMs < 2500, `answered in ${elapsedMs} ms`)
  t.equal((await send()).status, 503, 'still 503 while it is down')

  await kafka.startBroker(0)
  const back = await eventually(
    async () => {
      const r = await send()
      return r.status === 200 ? r : undefined
    },
    60_000,
    250,
  )
  t.equal(back.body.ids.length, 1, 'recovered without a restart')
})
