// Which consumer group reads each function's topic (runner/consumer-groups.ts), and the range
// assignment a shared group uses (bus/kafka-range-assignment.ts): what makes an env-scoped
// concurrency limit hold across runners (tests/distributed/flow-env-scope.test.ts runs it on Kafka).
import t from 'tap'
import { defineFunction, type FunctionOptions } from '../../client/function.ts'
import { planGroups } from '../../runner/consumer-groups.ts'
import { rangeAssignment } from '../../bus/kafka-range-assignment.ts'
import { routingKey } from '../../core/flow.ts'

const fn = (id: string, options: Omit<FunctionOptions, 'id'> = {}, env = 'production') =>
  defineFunction({ id: 'app', env }, { id, ...options }, { event: 'x/y' }, async () => null)
const envLimit = (key: string, limit = 1) => ({ limit, key, scope: 'env' as const })
const scopeOf = (f: { env: string; key: string }) => `${f.env}~${f.key}`
const plan = (functions: ReturnType<typeof fn>[]) =>
  planGroups(functions, scopeOf).map((p) => ({
    functions: p.functions.map((f) => f.id),
    coPartitioned: p.coPartitioned,
    name: p.name,
  }))

t.test('functions sharing an env-scoped key share one co-partitioned group; the others keep their own', async (t) => {
  const groups = plan([
    fn('plain'),
    fn('a', { concurrency: envLimit('event.data.customer') }),
    fn('keyed', { concurrency: { limit: 2, key: 'event.data.customer' } }),
    fn('b', { concurrency: envLimit('event.data.customer', 3) }),
    fn('other-key', { concurrency: envLimit('event.data.account') }),
    fn('staging', { concurrency: envLimit('event.data.customer') }, 'staging'),
  ])
  t.same(
    groups.map(({ functions, coPartitioned }) => ({ functions, coPartitioned })),
    [
      { functions: ['plain'], coPartitioned: false },
      { functions: ['keyed'], coPartitioned: false },
      { functions: ['a', 'b'], coPartitioned: true },
      { functions: ['other-key'], coPartitioned: true },
      { functions: ['staging'], coPartitioned: true },
    ],
  )
  t.equal(groups[0].name, 'production~app-plain', 'a function alone keeps the group it always had')
  t.match(groups[2].name, /^production~env-concurrency\.[0-9a-f]{16}$/)
  t.not(groups[2].name, groups[3].name, 'another key is another group')
  t.not(groups[2].name, groups[4].name, 'and so is another environment')
})

t.test(
  "a shared group is named by its keys, not its functions: one more function joins, it isn't renamed",
  async (t) => {
    const alone = plan([fn('a', { concurrency: envLimit('event.data.customer') })])
    const two = plan([
      fn('a', { concurrency: envLimit('event.data.customer') }),
      fn('b', { concurrency: envLimit('event.data.customer') }),
    ])
    t.equal(two[0].name, alone[0].name)
  },
)

t.test('a function with two env-scoped keys links their groups into one', async (t) => {
  const groups = plan([
    fn('a', { concurrency: envLimit('event.data.customer') }),
    fn('b', { concurrency: envLimit('event.data.account') }),
    fn('both', { concurrency: [envLimit('event.data.account'), envLimit('event.data.customer')] }),
  ])
  t.same(
    groups.map((g) => g.functions),
    [['a', 'b', 'both']],
  )
})

t.test('runs of an env-scoped limit are routed by its key, unless other options use another key', async (t) => {
  const only = fn('a', { concurrency: envLimit('event.data.customer') })
  const agreeing = fn('b', {
    concurrency: envLimit('event.data.customer'),
    throttle: { limit: 5, period: '1s', key: 'event.data.customer' },
  })
  const disagreeing = fn('c', { concurrency: [envLimit('event.data.customer'), { limit: 10 }] })
  t.equal(routingKey(only.flow), 'event.data.customer')
  t.equal(routingKey(agreeing.flow), 'event.data.customer')
  t.equal(routingKey(disagreeing.flow), null, 'a function-wide limit needs every run on one partition')
})

t.test(
  'range assignment: partition i of every topic to one member, contiguous, the first members one more',
  async (t) => {
    const everything = ['t1', 't2']
    const counts = new Map([
      ['t1', 4],
      ['t2', 4],
    ])
    const plan = rangeAssignment(
      new Map([
        ['m-b', everything],
        ['m-a', everything],
        ['m-c', undefined],
      ]),
      counts,
    )
    t.same(Object.fromEntries(plan), {
      'm-b': [
        { topic: 't1', partitions: [2] },
        { topic: 't2', partitions: [2] },
      ],
      'm-a': [
        { topic: 't1', partitions: [0, 1] },
        { topic: 't2', partitions: [0, 1] },
      ],
      'm-c': [
        { topic: 't1', partitions: [3] },
        { topic: 't2', partitions: [3] },
      ],
    })
    const crowded = rangeAssignment(new Map(['a', 'b', 'c'].map((id) => [id, ['t']])), new Map([['t', 2]]))
    t.same(crowded.get('c'), [], 'more members than partitions: the last get none')
    const partial = rangeAssignment(
      new Map([
        ['a', ['t1']],
        ['b', ['t1', 't2']],
      ]),
      new Map([
        ['t1', 2],
        ['t2', 2],
      ]),
    )
    t.same(
      Object.fromEntries(partial),
      {
        a: [{ topic: 't1', partitions: [0] }],
        b: [
          { topic: 't1', partitions: [1] },
          { topic: 't2', partitions: [0, 1] },
        ],
      },
      'a topic only some members read goes to them: none is left unread (though not co-partitioned)',
    )
  },
)
