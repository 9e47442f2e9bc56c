// Flow control as a user sees it, over HTTP and from the steps' own log: run against an embedded
// server (flow.test.ts) and distributed nodes on real Kafka and ClickHouse (tests/distributed/flow.test.ts).
// The functions are tests/functions/fixtures/flow.ts.
import type { Test } from 'tap'
import { readFile } from 'node:fs/promises'
import { eventually, getJson, postJson } from '../helpers/server.ts'

export interface FlowTarget {
  ingestUrl: string
  eventKey: string
  apiUrl: string
  headers: Record<string, string>
  /** The file the functions append their notes to (SLUICE_TEST_STEP_LOG). */
  stepLog: string
}

const FINAL = new Set(['completed', 'failed', 'cancelled', 'skipped'])

export function flowSuite(t: Test, target: () => FlowTarget, timeoutMs = 30_000) {
  const unique = () => Math.random().toString(36).slice(2, 10)
  const send = async (name: string, data: Record<string, unknown> | Array<Record<string, unknown>>) => {
    const { ingestUrl, eventKey } = target()
    const body = Array.isArray(data) ? data.map((d) => ({ name, data: d })) : { name, data }
    const response = await postJson(`${ingestUrl}/e/${eventKey}`, body)
    if (response.status !== 200) throw new Error(`send failed: ${JSON.stringify(response.body)}`)
    return response.body.ids as string[]
  }
  const rest = async (path: string) => (await getJson(`${target().apiUrl}${path}`, target().headers)).body
  const runsOf = async (eventId: string, fn: string) =>
    ((await rest(`/v1/events/${eventId}/runs`)).data ?? []).filter((r: any) => r.function_id === fn)
  /** The final runs of `fn` started by `ids`, once every one of them has one (or `count` in all). */
  const finalRuns = (ids: string[], fn: string, count = ids.length) =>
    eventually(
      async () => {
        const runs = new Map<string, any>()
        for (const id of ids) for (const r of await runsOf(id, fn)) if (FINAL.has(r.status)) runs.set(r.run_id, r)
        return runs.size >= count ? [...runs.values()] : undefined
      },
      timeoutMs,
      100,
    )
  const notes = async (fn: string, what: string) =>
    (await readFile(target().stepLog, 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l.startsWith(`${fn} ${what} `))
      .map((l) => {
        const [, , value, at] = l.split(' ')
        return { value: JSON.parse(value), at: Number(at) }
      })

  t.test('concurrency with a key: one run per customer at a time, customers in parallel', async (t) => {
    const [a, b] = [unique(), unique()]
    const ids = await send('flow/order', [{ customer: a }, { customer: a }, { customer: a }, { customer: b }])
    await finalRuns(ids, 'flow-per-customer')
    const starts = (await notes('per-customer', 'start')).filter((l) => l.value === a).map((l) => l.at)
    const ends = (await notes('per-customer', 'end')).filter((l) => l.value === a).map((l) => l.at)
    starts.sort((x, y) => x - y)
    ends.sort((x, y) => x - y)
    t.equal(starts.length, 3)
    for (let i = 1; i < starts.length; i++)
      t.ok(starts[i] >= ends[i - 1], `customer ${a}'s run ${i} began after run ${i - 1} ended`)
    const bStart = (await notes('per-customer', 'start')).find((l) => l.value === b)!.at
    t.ok(bStart < ends[ends.length - 1], "another customer's run did not wait for the first customer's backlog")
  })

  t.test('throttle: runs start at most 2 per 2 s, all of them, in the order they were queued', async (t) => {
    const tag = unique()
    const ns = [1, 2, 3, 4, 5].map((i) => `${tag}-${i}`)
    const ids = await send(
      'flow/throttled',
      ns.map((n) => ({ n })),
    )
    const runs = await finalRuns(ids, 'flow-throttled')
    // Events of one request reach the runner in the order the router saw them (distributed: from
    // several partitions), which is the order they were queued in.
    const queuedAt = new Map(runs.map((r) => [ns[ids.indexOf(r.event_id)], Date.parse(r.queued_at)]))
    const starts = (await notes('throttled', 'start')).filter((l) => ns.includes(l.value))
    t.equal(starts.length, 5, 'every run started, once')
    for (let i = 1; i < starts.length; i++)
      t.ok(queuedAt.get(starts[i - 1].value)! <= queuedAt.get(starts[i].value)!, 'in the order they were queued')
    for (let i = 2; i < starts.length; i++)
      t.ok(
        starts[i].at - starts[i - 2].at >= 1900,
        `no more than 2 starts within 2 s (${starts[i].at - starts[i - 2].at} ms)`,
      )
  })

  t.test('rateLimit: past 3 a minute per user, events start no run, shown as skipped with why', async (t) => {
    const [user, other] = [unique(), unique()]
    const ids = await send(
      'flow/limited',
      [1, 2, 3, 4, 5].map((n) => ({ user, n })),
    )
    const [otherId] = await send('flow/limited', { user: other, n: 6 })
    const runs = await finalRuns(ids, 'flow-limited')
    t.equal(runs.filter((r) => r.status === 'completed').length, 3)
    const skipped = runs.filter((r) => r.status === 'skipped')
    t.equal(skipped.length, 2)
    t.match(skipped[0].error, { code: 'RATE_LIMITED', message: /rate limit of 3 per 60 s/ })
    t.equal((await finalRuns([otherId], 'flow-limited'))[0].status, 'completed', 'another user has a limit of its own')
  })

  t.test('debounce: one run per quiet period, with the last event; a long burst runs at its timeout', async (t) => {
    const k = unique()
    const ids: string[] = []
    for (const n of [1, 2, 3]) {
      ids.push(...(await send('flow/debounced', { k, n: `${k}-${n}` })))
      await new Promise((r) => setTimeout(r, 300))
    }
    const [run] = await finalRuns(ids, 'flow-debounced', 1)
    t.equal(run.output, `${k}-3`, 'the last event of the burst')
    await new Promise((r) => setTimeout(r, 1500))
    t.equal((await notes('debounced', 'run')).filter((l) => String(l.value).startsWith(k)).length, 1, 'one run')

    const long = unique()
    const started = Date.now()
    const longIds: string[] = []
    while (Date.now() - started < 5500) {
      longIds.push(...(await send('flow/debounced', { k: long, n: `${long}-${Date.now() - started}` })))
      await new Promise((r) => setTimeout(r, 400))
    }
    const runs = await finalRuns(longIds, 'flow-debounced', 1)
    t.ok(runs.length >= 1, 'a burst longer than the timeout still runs')
  })

  t.test(
    'batchEvents: runs of up to 3 events, the rest after the timeout; each event in exactly one batch',
    async (t) => {
      const tag = unique()
      const ns = [1, 2, 3, 4, 5, 6, 7].map((i) => `${tag}-${i}`)
      const ids = await send(
        'flow/batched',
        ns.map((n) => ({ n })),
      )
      const runs = await finalRuns(ids, 'flow-batched', 3)
      const batches = runs.map((r) => r.output as string[]).sort((x, y) => x[0].localeCompare(y[0]))
      t.same(batches.flat().sort(), [...ns].sort(), 'each event in exactly one batch')
      t.ok(batches.every((b) => b.length <= 3))
      const full = runs.find((r) => r.output.length === 3)
      t.equal(full.event_ids.length, 3, 'a batch run lists its events')
      const other = await runsOf(full.event_ids[2], 'flow-batched')
      t.same(
        other.map((r: any) => r.run_id),
        [full.run_id],
        'and each of them finds it',
      )
    },
  )

  t.test('a batch run replayed or retried runs again with all its events, not one, not live ones', async (t) => {
    const { apiUrl, headers } = target()
    const tag = unique()
    const ns = [1, 2, 3].map((i) => `${tag}-${i}`)
    const ids = await send(
      'flow/batched-failing',
      ns.map((n) => ({ n })),
    )
    const [failed] = await finalRuns(ids, 'flow-batched-failing', 1)
    const all = `failed with 3 events: ${[...ns].sort().join(',')}`
    t.match(failed, { status: 'failed', error: { message: all } })
    const filter = {
      function: 'flow-batched-failing',
      status: 'failed',
      queued_after: Date.parse(failed.queued_at) - 1,
    }
    const replay = await postJson(`${apiUrl}/v1/runs/bulk`, { action: 'replay', mode: 'new', filter }, headers)
    t.equal(replay.status, 202)
    const replayed = await eventually(async () => {
      const runs = (await runsOf(ids[0], 'flow-batched-failing')).filter(
        (r: any) => r.run_id !== failed.run_id && FINAL.has(r.status),
      )
      return runs.length > 0 ? runs[0] : undefined
    }, timeoutMs)
    t.match(replayed, { status: 'failed', error: { message: all } }, 'the replay had the three events')
    t.equal(replayed.event_ids.length, 3, 'and lists them')
    const retry = await postJson(`${apiUrl}/v1/runs/${failed.run_id}/retry`, {}, headers)
    t.equal(retry.status, 202)
    const retried = await eventually(async () => {
      const run = (await rest(`/v1/runs/${failed.run_id}`)).data
      return run.attempts > failed.attempts && FINAL.has(run.status) ? run : undefined
    }, timeoutMs)
    t.match(retried, { status: 'failed', error: { message: all } }, 'the retry had the three events')
  })

  t.test('priority: with one run at a time, a VIP queued later runs before those queued earlier', async (t) => {
    const tag = unique()
    const ids = await send('flow/prioritized', [
      { n: `${tag}-1` },
      { n: `${tag}-2` },
      { n: `${tag}-3` },
      { n: `${tag}-4` },
      { n: `${tag}-vip`, vip: true },
    ])
    await finalRuns(ids, 'flow-prioritized')
    const order = (await notes('prioritized', 'run')).map((l) => l.value).filter((v) => String(v).startsWith(tag))
    t.ok(
      order.indexOf(`${tag}-vip`) < order.indexOf(`${tag}-4`),
      `the VIP ran before the last queued (${order.join(', ')})`,
    )
  })

  t.test('idempotency: one run per value in 24 hours', async (t) => {
    const order = unique()
    const ids = await send('flow/idempotent', [{ order }, { order }, { order: `${order}-b` }])
    const runs = await finalRuns(ids, 'flow-idempotent')
    t.same(runs.map((r) => r.status).sort(), ['completed', 'completed', 'skipped'])
    t.match(runs.find((r) => r.status === 'skipped').error, { code: 'IDEMPOTENT' })
  })

  t.test('singleton: skip mode skips a new run while one runs; cancel mode cancels the running one', async (t) => {
    const account = unique()
    const [first] = await send('flow/only-one', { account })
    await eventually(
      async () => ((await runsOf(first, 'flow-only-one'))[0]?.status === 'waiting' ? true : undefined),
      timeoutMs,
    )
    const [second] = await send('flow/only-one', { account })
    t.equal((await finalRuns([second], 'flow-only-one'))[0].status, 'skipped')
    t.equal((await finalRuns([first], 'flow-only-one'))[0].status, 'completed')

    const [old] = await send('flow/latest-wins', { account })
    await eventually(
      async () => ((await runsOf(old, 'flow-latest-wins'))[0]?.status === 'waiting' ? true : undefined),
      timeoutMs,
    )
    const [latest] = await send('flow/latest-wins', { account })
    const [cancelled] = await finalRuns([old], 'flow-latest-wins')
    t.equal(cancelled.status, 'cancelled')
    t.match(cancelled.cancelled_by, { kind: 'singleton' })
    t.equal((await finalRuns([latest], 'flow-latest-wins'))[0].status, 'completed')
  })

  t.test('pause holds new runs durably; resume runs them in order, or skips them', async (t) => {
    const { apiUrl, headers } = target()
    const pause = await postJson(`${apiUrl}/v1/functions/flow-plain/pause`, {}, headers)
    t.equal(pause.status, 200)
    t.equal(pause.body.data.paused, true)
    const tag = unique()
    const held = await send('flow/plain', [{ n: `${tag}-1` }, { n: `${tag}-2` }])
    await new Promise((r) => setTimeout(r, 1500))
    for (const id of held)
      t.same(
        (await runsOf(id, 'flow-plain')).map((r: any) => r.status),
        ['queued'],
        'held, not run',
      )
    const resumed = await fetch(`${apiUrl}/v1/functions/flow-plain/resume`, { method: 'POST', headers })
    t.equal(resumed.status, 200, 'resumed (a body is optional)')
    const runs = await finalRuns(held, 'flow-plain')
    t.same(
      runs.map((r) => r.status),
      ['completed', 'completed'],
      'run on resume',
    )
    const again = await postJson(`${apiUrl}/v1/functions/flow-plain/resume`, {}, headers)
    t.equal(again.status, 409)
    t.equal(again.body.code, 'FUNCTION_NOT_PAUSED')

    await postJson(`${apiUrl}/v1/functions/flow-plain/pause`, {}, headers)
    const skippedIds = await send('flow/plain', [{ n: `${tag}-3` }])
    await new Promise((r) => setTimeout(r, 1000))
    await postJson(`${apiUrl}/v1/functions/flow-plain/resume`, { skip_held: true }, headers)
    const [skipped] = await finalRuns(skippedIds, 'flow-plain')
    t.equal(skipped.status, 'skipped')
    t.match(skipped.error, { code: 'PAUSED' })
  })

  t.test('bulk cancel: a dry run counts, the job cancels every matching run and reports progress', async (t) => {
    const { apiUrl, headers } = target()
    const tag = unique()
    const ids = await send(
      'flow/plain',
      [1, 2, 3].map((n) => ({ n: `${tag}-${n}`, sleep: '1h' })),
    )
    for (const id of ids)
      await eventually(
        async () => ((await runsOf(id, 'flow-plain'))[0]?.status === 'waiting' ? true : undefined),
        timeoutMs,
      )
    const filter = { function: 'flow-plain', status: 'waiting' }
    const dry = await postJson(`${apiUrl}/v1/runs/bulk/dry-run`, { action: 'cancel', filter }, headers)
    t.equal(dry.status, 200)
    t.ok(dry.body.data.matched >= 3, `the dry run counts them (${dry.body.data.matched})`)
    for (const id of ids) t.equal((await runsOf(id, 'flow-plain'))[0].status, 'waiting', 'and changes nothing')
    const job = await postJson(`${apiUrl}/v1/runs/bulk`, { action: 'cancel', filter }, headers)
    t.equal(job.status, 202)
    const done = await eventually(async () => {
      const j = (await rest(`/v1/runs/bulk/${job.body.data.id}`)).data
      return j.status === 'done' ? j : undefined
    }, timeoutMs)
    t.ok(done.done >= 3, `it acted on them (${done.done})`)
    for (const run of await finalRuns(ids, 'flow-plain')) t.equal(run.status, 'cancelled')
  })

  t.test('bulk replay: failed runs again, as new runs of their events, or retried from their last step', async (t) => {
    const { apiUrl, headers } = target()
    const tag = unique()
    const [id] = await send('flow/plain', { n: `${tag}`, fail: true })
    const [failed] = await finalRuns([id], 'flow-plain')
    t.equal(failed.status, 'failed')
    const filter = { function: 'flow-plain', status: 'failed', queued_after: Date.parse(failed.queued_at) - 1 }
    const replay = await postJson(`${apiUrl}/v1/runs/bulk`, { action: 'replay', mode: 'new', filter }, headers)
    t.equal(replay.status, 202)
    await eventually(
      async () => ((await rest(`/v1/runs/bulk/${replay.body.data.id}`)).data.status === 'done' ? true : undefined),
      timeoutMs,
    )
    const runs = await finalRuns([id], 'flow-plain', 2)
    t.equal(runs.length, 2, 'a new run of the same event')
    t.ok(runs.every((r) => r.event_id === id))
    const bad = await postJson(`${apiUrl}/v1/runs/bulk`, { action: 'cancel', mode: 'retry', filter: {} }, headers)
    t.equal(bad.status, 400)
  })
}

/** The runs a crash test kills a process under: 8 throttled (2 of them started), 5 batched, a debounce of 2 events. */
export async function holdFlowRuns(ingestUrl: string, eventKey: string, stepLog: string, timeoutMs = 20_000) {
  const tag = Math.random().toString(36).slice(2, 10)
  const send = async (name: string, data: object[]) =>
    (
      await postJson(
        `${ingestUrl}/e/${eventKey}`,
        data.map((d) => ({ name, data: d })),
      )
    ).body.ids as string[]
  const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${tag}-${prefix}${i}`)
  const held = {
    stepLog,
    throttled: { names: names('t', 8), ids: [] as string[] },
    batched: { names: names('b', 5), ids: [] as string[] },
    debounced: { names: names('d', 2), ids: [] as string[] },
  }
  held.throttled.ids = await send(
    'flow/throttled',
    held.throttled.names.map((n) => ({ n })),
  )
  held.batched.ids = await send(
    'flow/batched',
    held.batched.names.map((n) => ({ n })),
  )
  for (const n of held.debounced.names) {
    held.debounced.ids.push(...(await send('flow/debounced', [{ k: tag, n }])))
    await new Promise((r) => setTimeout(r, 300))
  }
  await eventually(async () => ((await noted(held, 'throttled')).length >= 2 ? true : undefined), timeoutMs)
  return held
}

type Held = Awaited<ReturnType<typeof holdFlowRuns>>

/** What the functions noted for the held events of `fn`. */
const noted = async (held: Held, fn: 'throttled' | 'debounced') =>
  (await readFile(held.stepLog, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l.startsWith(`${fn} `))
    .map((l) => JSON.parse(l.split(' ')[2]))
    .filter((n) => held[fn].names.includes(n))

/** After the kill, `restart` and then every held event ran once (a step in flight at the kill may run twice),
 * each batched event in exactly one batch, the debounce once with its last event. */
export async function checkFlowRecovered(
  t: Test,
  held: Held,
  restart: () => Promise<{ url: string; headers: Record<string, string> }>,
  timeoutMs = 60_000,
) {
  const startedBefore = (await noted(held, 'throttled')).length
  t.ok(startedBefore < 8, `killed with throttled runs still waiting (${startedBefore} of 8 started)`)
  const api = await restart()
  const runsOf = async (id: string, fn: string) =>
    ((await getJson(`${api.url}/v1/events/${id}/runs`, api.headers)).body.data ?? []).filter(
      (r: any) => r.function_id === fn,
    )
  const completed = (ids: string[], fn: string, count: number) =>
    eventually(
      async () => {
        const runs = new Map<string, any>()
        for (const id of ids) for (const r of await runsOf(id, fn)) if (r.status === 'completed') runs.set(r.run_id, r)
        return runs.size >= count ? [...runs.values()] : undefined
      },
      timeoutMs,
      250,
    )
  t.equal((await completed(held.throttled.ids, 'flow-throttled', 8)).length, 8, 'every throttled event ran, once')
  const started = await noted(held, 'throttled')
  for (const name of held.throttled.names) {
    const times = started.filter((n) => n === name).length
    t.ok(times >= 1 && times <= 2, `${name} started ${times} time(s)`)
  }
  const batches = await completed(held.batched.ids, 'flow-batched', 2)
  t.same(
    batches.flatMap((r) => r.output as string[]).sort(),
    held.batched.names,
    'each batched event in exactly one batch',
  )
  const [debounce] = await completed(held.debounced.ids, 'flow-debounced', 1)
  t.equal(debounce.output, held.debounced.names[1], 'the debounce ran with its last event')
  await new Promise((r) => setTimeout(r, 2000))
  t.equal((await noted(held, 'debounced')).length, 1, 'once')
}
