// Served by the retry failover test's runners: fails its first two attempts (retries park for
// ~1 s, then ~2 s) and tells the test about every attempt.
import { Client } from 'sluice/client'

const client = new Client({ id: 'failover' })

export const flaky = client.createFunction(
  { id: 'flaky', retries: 5 },
  { event: 'rf/job' },
  async ({ event, attempt }) => {
    await fetch(
      `${process.env.RF_NOTIFY_URL}/?attempt=${attempt}&pid=${process.pid}&job=${String(event.data.job)}`,
    ).catch(() => undefined)
    if (attempt < 2) throw new Error(`attempt ${attempt} fails on purpose`)
    return { done: event.data.job }
  },
)
