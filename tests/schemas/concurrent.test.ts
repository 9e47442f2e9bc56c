// Embedded mode: concurrent pushes of one name's schema are a compare-and-set on its versions, so
// none answered 200 is lost and no two schemas get one number (issue 52, item 4).
import t from 'tap'
import { getJson, startServer } from '../helpers/server.ts'
import { checkRace, racePushes, type Push } from './race.ts'

const server = await startServer()
t.teardown(() => server.stop())

const NAME = 'race/pushed'
const push: Push = async (schema) => {
  const response = await fetch(`${server.url}/v1/schemas/${encodeURIComponent(NAME)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema }),
  })
  return { status: response.status, body: await response.json() }
}

t.test('four pushes at once, five times: every one answered 200 is its own stored version', async (t) => {
  const answers = await racePushes([push, push, push, push], 5)
  const got = await getJson(`${server.url}/v1/schemas/${encodeURIComponent(NAME)}`)
  t.equal(got.status, 200)
  checkRace(t, answers, got.body.data.versions)
})
