// Functions for bench/flow (copied in spirit from tests/functions/fixtures/flow.ts, which the benches
// do not import). A step that notes its start appends `start <n> <key> <receivedAt> <now>` (epoch ms)
// to BENCH_FLOW_LOG when set: one line per run (a step's result is replayed, not executed again),
// read by the bench once the runs are done; `end …` when the run returns.
import { appendFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, type FunctionEvent, type FunctionHandler } from 'sluice/client'

const client = new Client({ id: 'bench' })

const note = (what: 'start' | 'end', event: FunctionEvent) => {
  const log = process.env.BENCH_FLOW_LOG
  if (log) appendFileSync(log, `${what} ${event.data.n} ${event.data.key ?? '-'} ${event.receivedAt} ${Date.now()}\n`)
}

/**
 * One run per key at a time; the step notes when it began and takes 20 ms, and the run notes its end
 * (in the execution after the step's: a run is two executions) (bench/flow/fairness.ts).
 */
export const fair = client.createFunction(
  { id: 'fair', concurrency: { limit: 1, key: 'event.data.key' } },
  { event: 'flow/fair' },
  async ({ event, step }) => {
    await step.run('work', async () => {
      note('start', event)
      await sleep(20)
    })
    note('end', event)
  },
)

/** Starts at most 10 a second, the others wait in arrival order (bench/flow/throttle.ts). */
export const throttled = client.createFunction(
  { id: 'throttled', throttle: { limit: 10, period: '1s' } },
  { event: 'flow/throttled' },
  async ({ event, step }) => step.run('start', () => note('start', event)),
)

// bench/flow/overhead.ts: the same body without flow control, under concurrency limits and throttles
// the load never reaches (a throttle's burst lets a 10 ms batch through), per key (1,000 keys) and
// function-wide (all runs in one queue).
const work: FunctionHandler = async ({ event, step }) => step.run('work', () => (event.data.n as number) * 2)

export const plain = client.createFunction({ id: 'plain' }, { event: 'flow/plain' }, work)

export const concurrent = client.createFunction(
  { id: 'concurrent', concurrency: { limit: 100, key: 'event.data.key' } },
  { event: 'flow/concurrent' },
  work,
)

export const concurrentFn = client.createFunction(
  { id: 'concurrent-fn', concurrency: 100 },
  { event: 'flow/concurrent-fn' },
  work,
)

export const throttledHigh = client.createFunction(
  { id: 'throttled-high', throttle: { limit: 10_000, period: '1s', burst: 1_000 } },
  { event: 'flow/throttled-high' },
  work,
)

export const throttledKeyed = client.createFunction(
  { id: 'throttled-keyed', throttle: { limit: 100, period: '1s', burst: 100, key: 'event.data.key' } },
  { event: 'flow/throttled-keyed' },
  work,
)
