// docs/rest.md is the OpenAPI document the server serves, rendered (scripts/rest-reference.ts): a
// route, parameter, body field or answer added to or removed from the API shows here until the
// reference is rendered again (`node scripts/rest-reference.ts`).
import t from 'tap'
import { readFileSync } from 'node:fs'
import { getJson, startServer } from './helpers/server.ts'
import { REST_REFERENCE, renderRestReference } from '../scripts/rest-reference.ts'

t.test('docs/rest.md is the rendered OpenAPI document of the routes served', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const { body: doc } = await getJson(`${server.url}/v1/openapi.json`)
  const rendered = renderRestReference(doc)
  t.ok(rendered.includes('### `POST /v1/apps`'), 'a route is there')
  t.equal(readFileSync(REST_REFERENCE, 'utf8'), rendered, 'run `node scripts/rest-reference.ts` after changing routes')
})
