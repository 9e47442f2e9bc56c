// An env-scoped concurrency limit as a user sees it: two functions share `{ limit: 1, key: customer,
// scope: "env" }` (tests/functions/fixtures/flow-env-scope.ts); a burst over a few customers runs every
// event once in each function, and never two steps of one customer at once, whichever function or
// process executes them. Run embedded (flow-env-scope.test.ts) and across two runner processes on
// Kafka (tests/distributed/flow-env-scope.test.ts).
import type { Test } from 'tap'
import { readFile } from 'node:fs/promises'
import { eventually, postJson } from '../helpers/server.ts'

export interface EnvScopeTarget {
  ingestUrl: string
  eventKey: string
  stepLog: string
  /** How many processes serve the functions: each must have executed runs of the burst. */
  runners: number
}

interface Note {
  fn: string
  what: 'start' | 'end'
  customer: string
  n: number
  pid: number
  ms: number
}

const customers = Array.from({ length: 8 }, (_, i) => `c${i}`)

export function envScopeSuite(t: Test, target: EnvScopeTarget, timeoutMs = 60_000) {
  const notes = async (): Promise<Note[]> =>
    (await readFile(target.stepLog, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [fn, what, customer, n, pid, ms] = line.split(' ')
        const note = { fn, what, customer: JSON.parse(customer), n: JSON.parse(n), pid: Number(pid), ms: Number(ms) }
        return note as Note
      })
  const send = async (events: Array<{ customer: string; n: number }>) => {
    const body = events.map((data) => ({ name: 'envscope/order', data }))
    const response = await postJson(`${target.ingestUrl}/e/${target.eventKey}`, body)
    if (response.status !== 200) throw new Error(`send failed: ${JSON.stringify(response.body)}`)
  }

  t.test('one step at a time per customer across both functions and every runner; every event runs once', async (t) => {
    // Every runner holds partitions before the burst (a rebalance is not what this checks).
    let n = 0
    await eventually(
      async () => {
        await send(customers.map((customer) => ({ customer, n: n++ })))
        await new Promise((r) => setTimeout(r, 1000))
        return new Set((await notes()).map((x) => x.pid)).size >= target.runners ? true : undefined
      },
      timeoutMs,
      0,
    )
    const warmUp = n
    await send(customers.flatMap((customer) => Array.from({ length: 6 }, () => ({ customer, n: n++ }))))
    const expected = n * 2 // every event, in both functions
    const all = await eventually(
      async () => {
        const read = await notes()
        return read.filter((x) => x.what === 'end').length >= expected ? read : undefined
      },
      timeoutMs,
      200,
    )

    const starts = all.filter((x) => x.what === 'start')
    const times = new Map<string, number>()
    for (const s of starts) times.set(`${s.fn} ${s.n}`, (times.get(`${s.fn} ${s.n}`) ?? 0) + 1)
    t.equal(times.size, expected, 'every event ran in both functions')
    t.same(
      [...times].filter(([, count]) => count !== 1),
      [],
      'each exactly once',
    )

    const overlaps: string[] = []
    for (const customer of customers) {
      // At the same millisecond an end goes before a start: that is a hand-over, not an overlap.
      const steps = all
        .filter((x) => x.customer === customer)
        .sort((a, b) => a.ms - b.ms || (a.what === b.what ? 0 : a.what === 'end' ? -1 : 1))
      let executing = 0
      for (const step of steps) {
        executing += step.what === 'start' ? 1 : -1
        if (executing > 1) overlaps.push(`${customer}: ${step.fn} #${step.n} on ${step.pid} at ${step.ms}`)
      }
    }
    t.same(overlaps, [], 'never two steps of one customer at once')
    const burst = starts.filter((s) => s.n >= warmUp)
    t.equal(new Set(burst.map((s) => s.pid)).size, target.runners, 'every runner executed runs of the burst')
    const owners = new Map<string, Set<number>>()
    for (const s of burst) owners.set(s.customer, (owners.get(s.customer) ?? new Set()).add(s.pid))
    t.same(
      [...owners].filter(([, pids]) => pids.size > 1).map(([c]) => c),
      [],
      'each customer executed on one runner, for both functions',
    )
  })
}
