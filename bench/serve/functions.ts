// The in-process twin of bench/serve/app.ts: the same STEPS steps as a Sluice function.
import { appendFileSync } from 'node:fs'
import { Client } from 'sluice/client'

const STEPS = Number(process.env.BENCH_STEPS ?? 10)
const log = process.env.SLUICE_BENCH_LOG!
const client = new Client({ id: 'bench' })
const seen = new Set<string>()

export const steps = client.createFunction(
  { id: 'steps' },
  { event: 'bench/steps' },
  async ({ event, step, runId }) => {
    if (!seen.has(runId)) {
      seen.add(runId)
      appendFileSync(log, `first ${event.data.n} ${Date.now()}\n`)
    }
    let total = 0
    for (let i = 0; i < STEPS; i++) total += await step.run(`s${i}`, () => i)
    appendFileSync(log, `done ${event.data.n} ${Date.now()}\n`)
    return total
  },
)
