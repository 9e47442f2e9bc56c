// Functions for bench/e2e: each handler appends when it started to the file named by
// SLUICE_BENCH_LOG. Wall-clock milliseconds (Date.now), the clock ingest stamps receivedAt
// with and the one comparable across processes: timeOrigin + performance.now() drifts from
// it over a process's life (by 45 ms in one run here), which made latencies negative.
import { createWriteStream } from 'node:fs'
import { Client } from 'sluice/client'

const out = createWriteStream(process.env.SLUICE_BENCH_LOG ?? '/dev/null', { flags: 'a' })
const now = () => String(Date.now())
const client = new Client({ id: 'bench' })

/** Handler start of a function with no steps: pure dispatch latency. */
export const latency = client.createFunction({ id: 'latency' }, { event: 'bench/latency' }, async ({ event }) => {
  out.write(`latency ${event.internalId} ${event.receivedAt} ${now()}\n`)
})

export const noStep = client.createFunction({ id: 'no-step' }, { event: 'bench/no-step' }, async ({ event }) => {
  out.write(`no-step ${event.internalId} ${now()}\n`)
  return event.data.n
})

/** One checkpointed step, then the return: two executions and two records per run. */
export const oneStep = client.createFunction(
  { id: 'one-step' },
  { event: 'bench/one-step' },
  async ({ event, step }) => {
    const n = await step.run('work', () => (event.data.n as number) * 2)
    out.write(`one-step ${event.internalId} ${now()}\n`)
    return n
  },
)
