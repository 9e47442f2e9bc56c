// The app of bench/serve: npm inngest 4.x on loopback (PORT), one function of STEPS trivial steps.
// It logs, per run, when its first call arrived ("first <event n> <ms>") to SLUICE_BENCH_LOG, and
// prints "listening <url>" once up. The same handler runs in-process in bench/serve/functions.ts.
import { appendFileSync } from 'node:fs'
import { Inngest } from 'inngest'
import { createServer } from 'inngest/node'

const STEPS = Number(process.env.BENCH_STEPS ?? 10)
const log = process.env.SLUICE_BENCH_LOG!
const inngest = new Inngest({ id: 'bench', isDev: true, baseUrl: process.env.SLUICE_URL })
const seen = new Set<string>()
const fn = inngest.createFunction(
  { id: 'steps', triggers: { event: 'bench/steps' } },
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
const server = createServer({ client: inngest, functions: [fn] })
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  console.log(`listening http://127.0.0.1:${port}/api/inngest`)
})
