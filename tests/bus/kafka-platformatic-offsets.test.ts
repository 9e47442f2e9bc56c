// The @platformatic/kafka bus tells a group's committed offset and the end offset of each
// partition it reads (what consumer-lag metrics need): records not yet handled show as lag, and
// once the handler resolved them the group has committed up to the end.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { createPlatformaticKafkaBus } from '../../bus/kafka-platformatic.ts'
import { testServices } from '../infra/services.ts'
import { eventually } from '../helpers/server.ts'

const log = pino({ level: 'silent' })

t.test('groupOffsets: lag while the handler holds records, none once they are committed', async (t) => {
  const bus = await createPlatformaticKafkaBus(
    { brokers: testServices().kafkaBrokers, clientId: 'sluice-offsets-test', sessionTimeoutMs: 6000 },
    log,
  )
  t.teardown(() => bus.close())
  const topic = `offsets-${randomUUID().slice(0, 8)}`
  const group = `offsets-${randomUUID().slice(0, 8)}`
  await bus.ensureTopics({ [topic]: { partitions: 2 } })
  await bus.publish(
    topic,
    Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
  )
  let release!: () => void
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let handled = 0
  await bus.subscribe({
    group,
    topics: [topic],
    handler: async (batch) => {
      await held
      handled += batch.records.length
    },
  })
  const before = await bus.groupOffsets(group)
  t.same(before.map((o) => o.partition).sort(), [0, 1], 'every partition of the topic')
  t.equal(
    before.reduce((sum, o) => sum + Number(o.end - (o.committed < 0n ? 0n : o.committed)), 0),
    10,
    'the 10 records not yet handled are lag',
  )
  release()
  await eventually(async () => (handled === 10 ? true : undefined), 30_000)
  const after = await eventually(async () => {
    const offsets = await bus.groupOffsets(group)
    return offsets.every((o) => o.committed === o.end) ? offsets : undefined
  }, 30_000)
  t.equal(
    after.reduce((sum, o) => sum + Number(o.end), 0),
    10,
    'committed up to the end of each partition',
  )
  t.same(await bus.groupOffsets('no-such-group'), [], 'a group this bus does not subscribe has no offsets here')
})
