// What functions write for their waits: durations, times, cron schedules and CEL expressions.
import t from 'tap'
import { MAX_WAIT_MS, parseDuration, parseTime } from '../../core/duration.ts'
import { parseCron } from '../../core/cron.ts'
import { compileExpression, parsePath, valueAt } from '../../core/expression.ts'

t.test('durations: milliseconds or parts, combined, up to a year', async (t) => {
  const ok = (v: unknown) => {
    const p = parseDuration(v)
    return p.ok ? p.value : p.message
  }
  t.equal(ok('30s'), 30_000)
  t.equal(ok('5m'), 300_000)
  t.equal(ok('2h'), 7_200_000)
  t.equal(ok('7d'), 604_800_000)
  t.equal(ok('1h30m'), 5_400_000)
  t.equal(ok('1h 30m'), 5_400_000)
  t.equal(ok('1.5h'), 5_400_000)
  t.equal(ok('2w'), 1_209_600_000)
  t.equal(ok(250), 250)
  t.equal(ok(MAX_WAIT_MS), MAX_WAIT_MS)
  for (const bad of ['1h30', '2y', 'soon', '', '-5m', '1h-30m'])
    t.match(ok(bad), /is not a duration|empty/, `"${bad}" is refused`)
  t.match(ok(-1), /0 or more/)
  t.match(ok('366d'), /at most a year/)
  t.match(ok(Number.NaN), /0 or more/)
  t.match(ok({}), /milliseconds or a string/)
})

t.test('times: a Date, an ISO string or epoch milliseconds', async (t) => {
  t.same(parseTime(new Date(5)), { ok: true, value: 5 })
  t.same(parseTime('2026-01-01T00:00:00Z'), { ok: true, value: Date.UTC(2026, 0, 1) })
  t.same(parseTime(1_700_000_000_000), { ok: true, value: 1_700_000_000_000 })
  t.equal(parseTime('tomorrow').ok, false)
  t.equal(parseTime(null).ok, false)
})

t.test('cron: five fields, six with seconds, a TZ= prefix, in its time zone', async (t) => {
  const at = Date.parse('2026-11-26T10:00:00Z')
  const paris = parseCron('TZ=Europe/Paris 0 9 * * 1-5')
  t.ok(paris.ok)
  if (!paris.ok) return
  t.equal(new Date(paris.value.next(at)).toISOString(), '2026-11-27T08:00:00.000Z', '9:00 in Paris is 8:00 UTC')
  t.equal(new Date(paris.value.latest(at)!).toISOString(), '2026-11-26T08:00:00.000Z')
  const seconds = parseCron('*/10 * * * * *')
  t.ok(seconds.ok && seconds.value.next(at + 3000) === at + 10_000, 'a leading seconds field')
  const utc = parseCron('30 2 * * *')
  t.ok(utc.ok && new Date(utc.value.next(at)).toISOString() === '2026-11-27T02:30:00.000Z', 'UTC by default')
  for (const [bad, message] of [
    ['61 * * * *', /not a cron schedule.*minute/],
    ['* * *', /not a cron schedule/],
    ['TZ=Mars/Base 0 9 * * *', /unknown time zone "Mars\/Base"/],
    ['', /must be a cron expression/],
  ] as const) {
    const parsed = parseCron(bad)
    t.match(parsed.ok ? 'accepted' : parsed.message, message, `"${bad}"`)
  }
})

t.test('CEL: compiled once, over the declared names only, false on an error', async (t) => {
  const compiled = compileExpression('async.data.user == event.data.user && async.data.plan == "pro"', [
    'event',
    'async',
  ])
  if (!compiled.ok) return t.fail(compiled.message)
  const match = compiled.value
  t.equal(match({ event: { data: { user: 'a' } }, async: { data: { user: 'a', plan: 'pro' } } }), true)
  t.equal(match({ event: { data: { user: 'a' } }, async: { data: { user: 'b', plan: 'pro' } } }), false)
  t.equal(match({ event: { data: { user: 'a' } }, async: { data: {} } }), false, 'a missing field is false')
  t.equal(
    compileExpression(' async.data.user == event.data.user && async.data.plan == "pro"', ['event', 'async']).ok,
    true,
  )
  const numbers = compileExpression('event.data.amount >= 100 && size(event.data.items) == 2', ['event'])
  t.equal(numbers.ok && numbers.value({ event: { data: { amount: 150.5, items: [1, 2] } } }), true)
  const macro = compileExpression('event.data.items.exists(i, i.sku == "x")', ['event'])
  t.equal(
    macro.ok && macro.value({ event: { data: { items: [{ sku: 'y' }, { sku: 'x' }] } } }),
    true,
    'macros bind names',
  )
  t.match(compileExpression('user.id == 1', ['event']), { ok: false, message: /unknown name user/ })
  t.match(compileExpression('event.data.x ==', ['event']), { ok: false, message: /not valid CEL/ })
  t.match(compileExpression('', ['event']), { ok: false, message: /must be a CEL expression/ })
  t.match(compileExpression(42, ['event']), { ok: false })
})

t.test('match paths', async (t) => {
  t.same(parsePath('data.orderId'), { ok: true, value: ['data', 'orderId'] })
  t.equal(parsePath('data..x').ok, false)
  t.equal(parsePath('data.x[0]').ok, false)
  t.equal(valueAt({ data: { order: { id: 7 } } }, ['data', 'order', 'id']), 7)
  t.equal(valueAt({ data: {} }, ['data', 'order', 'id']), undefined)
  t.equal(valueAt({ data: { toString: 1 } }, ['data', 'constructor']), undefined, 'own fields only')
})

t.test('cron catch-up: recent missed ticks all run, late; of older ones only the latest', async (t) => {
  const { missedTicks, CRON_CATCH_UP_MS } = await import('../../runner/cron.ts')
  const every2s = parseCron('*/2 * * * * *')
  if (!every2s.ok) return t.fail(every2s.message)
  const now = Date.parse('2026-11-26T10:00:00.500Z')
  t.same(missedTicks(every2s.value, now - 500, now), [], 'nothing missed')
  t.same(
    missedTicks(every2s.value, now - 6_500, now).map((at) => new Date(at).toISOString()),
    ['2026-11-26T09:59:56.000Z', '2026-11-26T09:59:58.000Z', '2026-11-26T10:00:00.000Z'],
    'a short gap (a handover): every tick, in order',
  )
  const afterAnHour = missedTicks(every2s.value, now - 3_600_000, now)
  t.ok(afterAnHour.length <= 10, 'a long outage is not replayed in a burst')
  t.equal(afterAnHour[afterAnHour.length - 1], Date.parse('2026-11-26T10:00:00.000Z'), 'the latest tick runs')
  const daily = parseCron('0 9 * * *')
  if (!daily.ok) return
  const threeDays = missedTicks(daily.value, Date.parse('2026-11-23T09:00:00Z'), now)
  t.same(
    threeDays.map((at) => new Date(at).toISOString()),
    ['2026-11-26T09:00:00.000Z'],
    'of three days, the latest',
  )
  t.ok(CRON_CATCH_UP_MS >= 20_000)
})
