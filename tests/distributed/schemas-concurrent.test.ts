// Distributed mode: concurrent pushes of one name's schema through two api nodes over the real Kafka
// of the test services (control topic) never lose a version answered 200 nor give two schemas one
// number (issue 52, item 4): each push is a compare-and-set on the control topic.
import t from 'tap'
import { eventually, getJson } from '../helpers/server.ts'
import { checkRace, racePushes, type Push } from '../schemas/race.ts'
import { auth, distributedEnv, startNode } from './cluster.ts'

t.setTimeout(240_000)
const env = distributedEnv('schemasrace')
const a = await startNode(['api'], env, [], 'start', { startTimeoutMs: 120_000 })
t.teardown(() => a.kill())
const b = await startNode(['api'], env, [], 'start', { startTimeoutMs: 120_000 })
t.teardown(() => b.kill())

const NAME = 'race/pushed'
const path = `/v1/schemas/${encodeURIComponent(NAME)}`
const through =
  (url: string): Push =>
  async (schema) => {
    const response = await fetch(`${url}${path}`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ schema }),
    })
    return { status: response.status, body: await response.json() }
  }

t.test('pushes at once through two nodes: every one answered 200 is its own version on both', async (t) => {
  const answers = await racePushes([through(a.url), through(b.url), through(a.url), through(b.url)], 5)
  const stored = (await getJson(`${a.url}${path}`, auth)).body.data.versions
  checkRace(t, answers, stored)
  const onB = await eventually(async () => {
    const got = await getJson(`${b.url}${path}`, auth)
    return got.body.data?.versions.length === stored.length ? got.body.data.versions : undefined
  }, 30_000)
  t.same(onB, stored, 'the other node holds the same versions')
})
