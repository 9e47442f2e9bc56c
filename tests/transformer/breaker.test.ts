// The fair-share rules, on a fake clock: limit kills in a row pause a transform for a while; a
// call within its limits clears them; after the pause one probe decides. A kill, or running
// over the shared lane's budget, moves a transform to the slow lane for a while; a proven
// transform moves only after repeated overruns.
import t from 'tap'
import { createBreaker } from '../../transformer/breaker.ts'

const PAUSE_MS = 60_000
function breakerAt(start = 1_000_000) {
  let now = start
  const breaker = createBreaker({ kills: 3, pauseMs: PAUSE_MS }, () => now)
  return {
    breaker,
    advance: (ms: number) => {
      now += ms
    },
    now: () => now,
  }
}

t.test(
  'a new transform runs in the shared lane on probation (one at a time) until a call finishes within its limits',
  async (t) => {
    const { breaker } = breakerAt()
    t.same(breaker.admit('wh@1'), { kind: 'run', lane: 'shared', probation: true })
    breaker.record('wh@1', 'ok')
    t.same(breaker.admit('wh@1'), { kind: 'run', lane: 'shared', probation: false })
  },
)

t.test('a kill moves it to the slow lane on probation; kills in a row pause it for pauseMs', async (t) => {
  const { breaker, now } = breakerAt()
  breaker.record('wh@1', 'ok')
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'run', lane: 'slow', probation: true })
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'run', lane: 'slow', probation: true })
  breaker.record('wh@1', 'limit')
  t.same(breaker.admit('wh@1'), { kind: 'paused', until: now() + PAUSE_MS, kills: 3 })
})

t.test('a call within the limits between kills starts the count again', async (t) => {
  const { breaker } = breakerAt()
  for (const outcome of ['limit', 'limit', 'ok', 'limit', 'limit'] as const) breaker.record('wh@1', outcome)
  t.equal(breaker.admit('wh@1').kind, 'run')
})

t.test(
  'after the pause one probe runs, in the slow lane: a kill pauses it again at once, a good call closes it',
  async (t) => {
    const { breaker, advance, now } = breakerAt()
    for (let i = 0; i < 3; i++) breaker.record('wh@1', 'limit')
    advance(PAUSE_MS)
    t.same(
      breaker.admit('wh@1'),
      { kind: 'run', lane: 'slow', probation: true },
      'the pause is over: probation, slow lane',
    )
    breaker.record('wh@1', 'limit')
    t.same(breaker.admit('wh@1'), { kind: 'paused', until: now() + PAUSE_MS, kills: 4 })
    advance(PAUSE_MS)
    breaker.record('wh@1', 'ok')
    t.same(
      breaker.admit('wh@1'),
      { kind: 'run', lane: 'slow', probation: false },
      'proven again, still in the slow lane for a while',
    )
    advance(PAUSE_MS)
    t.same(breaker.admit('wh@1'), { kind: 'run', lane: 'shared', probation: false }, 'then back in the shared lane')
  },
)

t.test(
  'an unproven transform over budget moves to the slow lane at once; a proven one after repeated overruns',
  async (t) => {
    const { breaker, advance } = breakerAt()
    breaker.record('new@1', 'overBudget')
    t.same(breaker.admit('new@1'), { kind: 'run', lane: 'slow', probation: true })
    advance(PAUSE_MS)
    t.same(breaker.admit('new@1'), { kind: 'run', lane: 'shared', probation: true }, 'for pauseMs')

    breaker.record('good@1', 'ok')
    breaker.record('good@1', 'overBudget')
    breaker.record('good@1', 'overBudget')
    t.same(
      breaker.admit('good@1'),
      { kind: 'run', lane: 'shared', probation: false },
      'two overruns of a proven transform: a loaded host, not a hostile transform',
    )
    breaker.record('good@1', 'ok')
    breaker.record('good@1', 'overBudget')
    breaker.record('good@1', 'overBudget')
    t.equal(
      breaker.admit('good@1').kind === 'run' && (breaker.admit('good@1') as { lane: string }).lane,
      'shared',
      'a call within budget starts the count again',
    )
    breaker.record('good@1', 'overBudget')
    t.same(breaker.admit('good@1'), { kind: 'run', lane: 'slow', probation: false }, 'the third in a row moves it')
  },
)

t.test('each transform version has its own state: a fix is not paused', async (t) => {
  const { breaker } = breakerAt()
  for (let i = 0; i < 3; i++) breaker.record('wh@1', 'limit')
  t.equal(breaker.admit('wh@1').kind, 'paused')
  t.same(breaker.admit('wh@2'), { kind: 'run', lane: 'shared', probation: true })
  t.same(breaker.admit('other@1'), { kind: 'run', lane: 'shared', probation: true })
})
