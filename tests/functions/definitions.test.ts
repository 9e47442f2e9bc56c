// createFunction checks every option when the function is defined: a bad one throws a TypeError
// naming the option and the fault.
import t from 'tap'
import { Client } from 'sluice/client'

const client = new Client({ id: 'app' })
const handler = async () => null

t.test('triggers: an event, a prefix/*, with a CEL filter, a cron schedule, or an array of them', async (t) => {
  const fn = client.createFunction(
    { id: 'many' },
    [{ event: 'shop/*', if: 'event.data.vip == true' }, { event: 'a/b' }, { cron: 'TZ=Europe/Paris 0 9 * * 1-5' }],
    handler,
  )
  t.same(fn.triggers, [
    { event: 'shop/*', if: 'event.data.vip == true' },
    { event: 'a/b' },
    { cron: 'TZ=Europe/Paris 0 9 * * 1-5' },
  ])
  t.same(client.createFunction({ id: 'one' }, { event: 'a/b' }, handler).triggers, [{ event: 'a/b' }])
})

t.test('bad triggers and options are refused when the function is defined, naming the option', async (t) => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'an empty event',
      () => client.createFunction({ id: 'x' }, { event: '' }, handler),
      /\{ trigger\.event \}\): must be an event name/,
    ],
    ['a * inside a name', () => client.createFunction({ id: 'x' }, { event: 'a*b' }, handler), /trigger\.event/],
    [
      'a bad filter',
      () => client.createFunction({ id: 'x' }, { event: 'a', if: 'event.x ==' }, handler),
      /\{ trigger\.if \}\): not valid CEL/,
    ],
    [
      'a filter on async',
      () => client.createFunction({ id: 'x' }, { event: 'a', if: 'async.x == 1' }, handler),
      /trigger\.if \}\): unknown name async/,
    ],
    [
      'a bad cron',
      () => client.createFunction({ id: 'x' }, [{ event: 'a' }, { cron: '61 * * * *' }], handler),
      /\{ triggers\[1\]\.cron \}\): "61 \* \* \* \*" is not a cron schedule/,
    ],
    [
      'an unknown zone',
      () => client.createFunction({ id: 'x' }, { cron: 'TZ=Nowhere/X 0 * * * *' }, handler),
      /unknown time zone/,
    ],
    ['no triggers', () => client.createFunction({ id: 'x' }, [], handler), /from 1 to 10 triggers/],
    [
      'cancelOn not an array',
      () => client.createFunction({ id: 'x', cancelOn: {} as never }, { event: 'a' }, handler),
      /\{ cancelOn \}\): must be an array/,
    ],
    [
      'cancelOn without event',
      () => client.createFunction({ id: 'x', cancelOn: [{} as never] }, { event: 'a' }, handler),
      /\{ cancelOn\[0\]\.event \}/,
    ],
    [
      'cancelOn bad match',
      () => client.createFunction({ id: 'x', cancelOn: [{ event: 'b', match: 'data..x' }] }, { event: 'a' }, handler),
      /cancelOn\[0\]\.match \}\): must be a field path/,
    ],
    [
      'cancelOn bad if',
      () => client.createFunction({ id: 'x', cancelOn: [{ event: 'b', if: 'nope.x == 1' }] }, { event: 'a' }, handler),
      /\{ cancelOn\[0\]\.if \}\): unknown name nope/,
    ],
    [
      'cancelOn bad timeout',
      () => client.createFunction({ id: 'x', cancelOn: [{ event: 'b', timeout: '2y' }] }, { event: 'a' }, handler),
      /\{ cancelOn\[0\]\.timeout \}\): "2y" is not a duration/,
    ],
  ]
  for (const [name, define, message] of cases) t.throws(define, { name: 'TypeError', message }, name)
})

t.test('cancelOn is kept with its timeout in milliseconds', async (t) => {
  const fn = client.createFunction(
    {
      id: 'c',
      cancelOn: [
        { event: 'b', match: 'data.id', timeout: '1h30m' },
        { event: 'c', if: 'async.data.x == event.data.x' },
      ],
    },
    { event: 'a' },
    handler,
  )
  t.same(fn.cancelOn, [
    { event: 'b', match: 'data.id', timeoutMs: 5_400_000 },
    { event: 'c', if: 'async.data.x == event.data.x' },
  ])
})
