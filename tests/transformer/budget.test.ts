// The shared lane's budget: a proven transform's call is charged only for its run, so waiting
// behind a busy isolate never moves it; a call on probation is charged from the moment it asks,
// so a new transform stuck behind others gives up its place (its request goes to the slow lane)
// instead of holding back its partition's batch.
import t from 'tap'
import { withinBudget } from '../../transformer/budget.ts'
import { createSandbox } from '../../transformer/sandbox.ts'
import type { TransformResult } from '../../transformer/sandbox-types.ts'
import { LIMITS, request } from './payloads.ts'

const ECHO = 'function transform(evt) { return { name: "echo", data: evt } }'
const LOOP = 'function transform() { while (true) {} }'

async function behindALoop(probation: boolean) {
  const sandbox = createSandbox({ ...LIMITS, cpuTimeMs: 400, wallTimeMs: 1000 }, { isolates: 1 })
  const loop = sandbox.run('loop', LOOP, request({}))
  let call: Promise<TransformResult> | undefined
  const outcome = await withinBudget(
    sandbox,
    50,
    (budgeted) => (call = budgeted.run('echo', ECHO, request({ n: 1 }))),
    probation,
  )
  const result = await call
  await loop
  await sandbox.close()
  return { outcome, result }
}

t.test('a proven call waits behind a busy isolate and is not charged for the wait', async (t) => {
  const { outcome } = await behindALoop(false)
  t.strictSame(outcome, { kind: 'done', value: { kind: 'ok', value: { name: 'echo', data: { n: 1 } } } })
})

t.test('a call on probation is charged for its wait: over budget, and it never runs', async (t) => {
  const { outcome, result } = await behindALoop(true)
  t.strictSame(outcome, { kind: 'overBudget' })
  t.strictSame(
    result,
    { kind: 'error', code: 'TRANSFORM_TIMEOUT', message: 'the caller gave up waiting for the transform' },
    'the given-up call left the queue without running',
  )
})
