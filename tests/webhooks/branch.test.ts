// Branch-group webhooks: the environment comes from header or query `x-service-env`; none, or
// an unknown (or archived) name → the request is kept on the central webhook page (status
// unrouted, with its transformed events) and nothing is published, so no functions run.
import t from 'tap'
import { getJson, postJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, outcome, storedEvents } from './helpers.ts'
import { githubHeaders, githubPullRequestOpened } from './payloads.ts'

const server = await startServer()
t.teardown(() => server.stop())
await postJson(`${server.url}/v1/envs`, { name: 'pr-42', branch: true })
await postJson(`${server.url}/v1/envs`, { name: 'pr-7', branch: true })
await postJson(`${server.url}/v1/envs/pr-7/archive`, {})
const hook = await createWebhook(server.url, {
  name: 'GitHub previews',
  env: 'branch',
  transform:
    "function transform(evt, headers) { return { name: 'github/' + headers['X-Github-Event'] + '.' + evt.action, data: { number: evt.number } } }",
})

t.test('header x-service-env routes to that branch environment', async (t) => {
  const sent = await deliver(hook.url, githubPullRequestOpened, { ...githubHeaders, 'x-service-env': 'pr-42' })
  const result = await outcome(server.url, hook.id, sent.body.request_id)
  t.same([result.status, result.env], ['delivered', 'pr-42'])
  const [event] = await storedEvents(server.url, result.event_ids)
  t.same([event.env, event.name, event.data], ['pr-42', 'github/pull_request.opened', { number: 42 }])
})

t.test('query x-service-env routes too (for senders that cannot set headers)', async (t) => {
  const sent = await deliver(`${hook.url}?x-service-env=pr-42`, githubPullRequestOpened, githubHeaders)
  const result = await outcome(server.url, hook.id, sent.body.request_id)
  t.same([result.status, result.env], ['delivered', 'pr-42'])
})

t.test(
  'no environment, an unknown one or an archived one: kept on the central webhook page, nothing published',
  async (t) => {
    const variants: Array<Record<string, string>> = [{}, { 'x-service-env': 'pr-999' }, { 'x-service-env': 'pr-7' }]
    for (const headers of variants) {
      const sent = await deliver(hook.url, githubPullRequestOpened, { ...githubHeaders, ...headers })
      t.equal(sent.status, 200, 'the sender still gets its 200')
      const result = await outcome(server.url, hook.id, sent.body.request_id)
      t.equal(result.status, 'unrouted', JSON.stringify(headers))
      t.equal(result.env, null)
      t.same(result.event_ids, [], 'nothing went to incoming')
      t.same(
        result.events,
        [{ name: 'github/pull_request.opened', data: { number: 42 } }],
        'the transformed event is shown',
      )
    }
    const page = await getJson(`${server.url}/v1/webhooks/${hook.id}/requests?status=unrouted`)
    t.equal(page.body.data.length, 3)
    const stored = await getJson(`${server.url}/v1/events?name=github/pull_request.opened`)
    t.ok(
      stored.body.data.every((e: any) => e.env === 'pr-42'),
      'no event was stored outside the routed branch',
    )
  },
)

t.test('a non-branch webhook ignores x-service-env and delivers to its own environment', async (t) => {
  const prod = await createWebhook(server.url, { name: 'Prod' })
  const sent = await deliver(prod.url, { a: 1 }, { 'x-service-env': 'pr-42' })
  t.equal((await outcome(server.url, prod.id, sent.body.request_id)).env, 'production')
})
