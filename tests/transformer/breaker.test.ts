// The circuit breaker's rules, on a fake clock: limit kills in a row pause a transform for a
// while; a call that finishes within its limits clears them; after the pause one probe decides.
import t from 'tap'
import { createBreaker } from '../../transformer/breaker.ts'

function breakerAt(start = 1_000_000) {
  let now = start
  const breaker = createBreaker({ kills: 3, pauseMs: 60_000 }, () => now)
  return { breaker, advance: (ms: number) => { now += ms }, now: () => now }
}

t.test('a new transform runs on probation (one at a time) until a call finishes within its limits', async (t) => {
  const { breaker } = breakerAt()
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: true })
  breaker.record('wh@1', 'ok')
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: false })
})

t.test('kills in a row pause it for pauseMs; a kill puts a proven transform back on probation', async (t) => {
  const { breaker, now } = breakerAt()
  breaker.record('wh@1', 'ok')
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: true })
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: true })
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'paused', until: now() + 60_000, kills: 3 })
})

t.test('a call within the limits between kills starts the count again', async (t) => {
  const { breaker } = breakerAt()
  for (const outcome of ['limit', 'limit', 'ok', 'limit', 'limit'] as const) breaker.record('wh@1', outcome)
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: true })
})

t.test('after the pause one probe runs: a kill pauses it again at once, a good call closes it', async (t) => {
  const { breaker, advance, now } = breakerAt()
  for (let i = 0; i < 3; i++) breaker.record('wh@1', 'limit')
  advance(60_000)
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: true }, 'the pause is over: probation')
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'paused', until: now() + 60_000, kills: 4 })
  advance(60_000)
  breaker.record('wh@1', 'ok')
  t.same(breaker.admit('wh@1'), { kind: 'run', probation: false })
})

t.test('each transform version has its own state: a fix is not paused', async (t) => {
  const { breaker } = breakerAt()
  for (let i = 0; i < 3; i++) breaker.record('wh@1', 'limit')
  t.equal(breaker.admit('wh@1').kind, 'paused')
  t.same(breaker.admit('wh@2'), { kind: 'run', probation: true })
  t.same(breaker.admit('other@1'), { kind: 'run', probation: true })
})
