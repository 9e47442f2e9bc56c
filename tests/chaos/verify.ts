// What a chaos run must leave behind, read from ClickHouse, Kafka and the side-effects file:
// every acknowledged event stored once, every function run once per original event (each
// step's side effect at most twice), every sleeping and waiting run resumed, every acknowledged
// webhook request stored with its event, and nothing stuck (consumer lag zero, no run left queued,
// waiting or retrying).
import { readFile } from 'node:fs/promises'
import { Kafka, logLevel } from 'kafkajs'
import type { ChaosCluster } from './cluster.ts'
import type { LoadTally } from './load.ts'

const NAMES = ['chaos/order', 'chaos/bulk', 'chaos/webhook.paid', 'chaos/shipped', 'chaos/paid']
/** Steps each function's run executes, as tests/chaos/functions.ts defines them. */
const STEPS: Record<string, string[]> = { fulfil: ['reserve', 'charge'], pay: ['pay'], audit: ['record'] }
const TRIGGERS: Record<string, string[]> = { 'chaos/order': ['fulfil', 'pay'], 'chaos/webhook.paid': ['audit'] }

export interface ChaosCounts {
  acknowledged: number
  stored: number
  lost: number
  /** Dedup keys with more than one original row, and events a function sent more than once. */
  duplicates: number
  webhookRequestsAcknowledged: number
  webhookRequestsLost: number
  runsExpected: number
  runsCompleted: number
  runsMissing: number
  /** Runs of events that are not originals (a duplicate must run nothing). */
  runsUnexpected: number
  runsNotCompleted: number
  sentEventsMissing: number
  /** `fulfil` runs whose wait for the payment was resumed by it, and those that timed out instead. */
  waitsResumed: number
  waitsTimedOut: number
  sideEffects: number
  stepsRunTwice: number
  stepsRunMoreThanTwice: number
  stepsNeverRun: number
  consumerLag: number
  /** Physical rows before ReplacingMergeTree collapses retried inserts (not a defect). */
  rowsBeforeMerge: number
}

export interface Verdict {
  counts: ChaosCounts
  examples: Record<string, string[]>
  settled: boolean
}

async function query<T>(cluster: ChaosCluster, sql: string): Promise<T[]> {
  const response = await fetch(`${cluster.clickhouseUrl}/?database=${cluster.database}`, {
    method: 'POST',
    body: `${sql} FORMAT JSONEachRow`,
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`ClickHouse: ${text}`)
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T)
}

/** Lag of every consumer group of the cluster (records not yet processed and committed), by group and topic. */
export async function consumerLag(cluster: ChaosCluster): Promise<Map<string, number>> {
  const admin = new Kafka({
    clientId: 'sluice-chaos-check',
    brokers: cluster.kafka.brokers,
    logLevel: logLevel.NOTHING,
  }).admin()
  await admin.connect()
  try {
    const lag = new Map<string, number>()
    const highs = new Map<string, Map<number, number>>()
    const groupIds = (await admin.listGroups()).groups.map((g) => g.groupId)
    const states = new Map(
      (await admin.describeGroups(groupIds)).groups.map((g) => [g.groupId, `${g.state}, ${g.members.length} members`]),
    )
    for (const groupId of groupIds) {
      // A control view's group is its process's own (control/topic.ts): a killed process leaves an empty
      // one behind, which falls behind as the control topic is written on (an alert evaluator's lease).
      // The views of the processes running are checked.
      if (groupId.includes('.control.view.') && states.get(groupId)?.endsWith(' 0 members')) continue
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId })) {
        if (!highs.has(topic))
          highs.set(topic, new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])))
        const behind = partitions.reduce(
          (sum, p) => sum + Math.max(0, (highs.get(topic)!.get(p.partition) ?? 0) - Math.max(0, Number(p.offset))),
          0,
        )
        if (behind > 0) lag.set(`${groupId} (${states.get(groupId)}) on ${topic}`, behind)
      }
    }
    return lag
  } finally {
    await admin.disconnect()
  }
}

/**
 * `scoped`: judge only the events `tally` acknowledged (their duplicates, runs and sent events), for
 * one phase of a run; consumer lag and runs of duplicates stay cluster-wide.
 */
export async function verify(cluster: ChaosCluster, tally: LoadTally, scoped = false): Promise<Verdict> {
  const inNames = NAMES.map((n) => `'${n}'`).join(', ')
  const events = await query<{
    internal_id: string
    id: string
    name: string
    duplicate_of: string | null
    order: string
  }>(
    cluster,
    `SELECT internal_id, id, name, duplicate_of, visitParamExtractString(data, 'order') AS order
     FROM events FINAL WHERE name IN (${inNames})`,
  )
  const [{ rows }] = await query<{ rows: string }>(
    cluster,
    `SELECT count() AS rows FROM events WHERE name IN (${inNames})`,
  )
  const requests = await query<{ request_id: string; status: string; event_ids: string[] }>(
    cluster,
    `SELECT request_id, status, event_ids FROM webhook_requests FINAL WHERE webhook_id = '${cluster.webhookId}'`,
  )
  const runs = await query<{ run_id: string; function_id: string; event_id: string; status: string; steps: string }>(
    cluster,
    'SELECT run_id, function_id, event_id, status, steps FROM runs FINAL',
  )
  const sideEffectLines = (await readFile(cluster.sideEffectsFile, 'utf8')).split('\n').filter(Boolean)
  const examples: Record<string, string[]> = {}
  const note = (what: string, example: string) => {
    examples[what] ??= []
    if (examples[what].length < 5) examples[what].push(example)
  }

  const byInternalId = new Map(events.map((e) => [e.internal_id, e]))
  let lost = 0
  for (const id of tally.events.keys())
    if (!byInternalId.has(id)) {
      lost++
      note('lost', id)
    }

  const inScope = (internalId: string) => !scoped || tally.events.has(internalId)
  const allOriginals = events.filter((e) => e.duplicate_of === null)
  const originalsPerKey = new Map<string, number>()
  for (const e of allOriginals) originalsPerKey.set(e.id, (originalsPerKey.get(e.id) ?? 0) + 1)
  const keysInScope = new Set(allOriginals.filter((e) => inScope(e.internal_id)).map((e) => e.id))
  const originals = allOriginals.filter((e) => inScope(e.internal_id))
  let duplicates = 0
  for (const [key, count] of originalsPerKey)
    if (count > 1 && keysInScope.has(key)) {
      duplicates += count - 1
      note('duplicates', key)
    }
  const sentPerOrder = (name: string) => {
    const perOrder = new Map<string, number>()
    for (const e of allOriginals.filter((o) => o.name === name && inScope(o.order)))
      perOrder.set(e.order, (perOrder.get(e.order) ?? 0) + 1)
    for (const [order, count] of perOrder)
      if (count > 1) {
        duplicates += count - 1
        note('duplicates', `${name} for ${order}`)
      }
    return perOrder
  }
  const shippedPerOrder = sentPerOrder('chaos/shipped')
  const paidPerOrder = sentPerOrder('chaos/paid')

  const requestById = new Map(requests.map((r) => [r.request_id, r]))
  let webhookRequestsLost = 0
  for (const requestId of tally.webhookRequests.keys()) {
    const request = requestById.get(requestId)
    const stored =
      request?.status === 'delivered' && request.event_ids.length === 1 && byInternalId.has(request.event_ids[0])
    if (!stored) {
      webhookRequestsLost++
      note('webhookRequestsLost', `${requestId} (${request?.status ?? 'no row'})`)
    }
  }

  // Expected runs: one per function per original event that triggers it.
  const expected = new Map<string, string>() // `${fn}/${event}` → fn
  for (const e of originals) for (const fn of TRIGGERS[e.name] ?? []) expected.set(`${fn}/${e.internal_id}`, fn)
  const shortName = (functionId: string) => Object.keys(STEPS).find((fn) => functionId.endsWith(fn)) ?? functionId
  const runKeys = new Map(runs.map((r) => [`${shortName(r.function_id)}/${r.event_id}`, r]))
  let runsMissing = 0
  let runsNotCompleted = 0
  let runsCompleted = 0
  let sentEventsMissing = 0
  for (const key of expected.keys()) {
    const run = runKeys.get(key)
    if (!run) {
      runsMissing++
      note('runsMissing', key)
      continue
    }
    if (run.status === 'completed') runsCompleted++
    else {
      runsNotCompleted++
      note('runsNotCompleted', `${key} ${run.status}`)
    }
  }
  for (const e of originals.filter((o) => o.name === 'chaos/order'))
    for (const [name, sent] of [
      ['shipped', shippedPerOrder],
      ['paid', paidPerOrder],
    ] as const)
      if (!sent.has(e.internal_id)) {
        sentEventsMissing++
        note('sentEventsMissing', `${name} for ${e.internal_id}`)
      }
  let waitsResumed = 0
  let waitsTimedOut = 0
  for (const run of runs.filter((r) => r.status === 'completed' && shortName(r.function_id) === 'fulfil')) {
    const pause = (
      JSON.parse(run.steps) as Array<{ id: string; pause?: { matchedEventId?: string; timedOut?: boolean } }>
    ).find((s) => s.id === 'paid')?.pause
    if (pause?.matchedEventId) waitsResumed++
    else if (pause?.timedOut) waitsTimedOut++
  }
  let runsUnexpected = 0
  for (const key of scoped ? [] : runKeys.keys())
    if (!expected.has(key)) {
      runsUnexpected++
      note('runsUnexpected', key)
    }

  const executions = new Map<string, number>()
  for (const line of sideEffectLines) {
    const [fn, step, eventId] = line.split('\t')
    executions.set(`${fn}/${eventId}/${step}`, (executions.get(`${fn}/${eventId}/${step}`) ?? 0) + 1)
  }
  let stepsNeverRun = 0
  for (const [key, fn] of expected) {
    for (const step of STEPS[fn])
      if (!executions.has(`${key}/${step}`)) {
        stepsNeverRun++
        note('stepsNeverRun', `${key}/${step}`)
      }
  }
  const counts = [...executions.values()]
  const lag = await consumerLag(cluster)
  for (const [where, behind] of lag) note('consumerLag', `${where}: ${behind}`)
  const result: ChaosCounts = {
    acknowledged: tally.events.size,
    stored: tally.events.size - lost,
    lost,
    duplicates,
    webhookRequestsAcknowledged: tally.webhookRequests.size,
    webhookRequestsLost,
    runsExpected: expected.size,
    runsCompleted,
    runsMissing,
    runsUnexpected,
    runsNotCompleted,
    sentEventsMissing,
    waitsResumed,
    waitsTimedOut,
    sideEffects: sideEffectLines.length,
    stepsRunTwice: counts.filter((c) => c === 2).length,
    stepsRunMoreThanTwice: counts.filter((c) => c > 2).length,
    stepsNeverRun,
    consumerLag: [...lag.values()].reduce((a, b) => a + b, 0),
    rowsBeforeMerge: Number(rows),
  }
  const settled =
    result.lost === 0 &&
    result.webhookRequestsLost === 0 &&
    result.runsMissing === 0 &&
    result.runsNotCompleted === 0 &&
    result.sentEventsMissing === 0 &&
    result.consumerLag === 0
  return { counts: result, examples, settled }
}

/** Settled, with nothing duplicated, run unexpectedly, run more than twice or never, and no process exited by itself. */
export function verdictClean(verdict: Verdict, unexpectedExits: string[]): boolean {
  const c = verdict.counts
  return (
    verdict.settled &&
    unexpectedExits.length === 0 &&
    c.duplicates === 0 &&
    c.runsUnexpected === 0 &&
    c.stepsRunMoreThanTwice === 0 &&
    c.stepsNeverRun === 0
  )
}

/** Verifies until the pipeline has caught up (or `timeoutMs` passes), then returns the last verdict. */
export async function verifyWhenSettled(
  cluster: ChaosCluster,
  tally: LoadTally,
  timeoutMs: number,
): Promise<Verdict & { settleMs: number }> {
  const started = Date.now()
  for (;;) {
    const verdict = await verify(cluster, tally)
    if (verdict.settled || Date.now() - started > timeoutMs) return { ...verdict, settleMs: Date.now() - started }
    await new Promise((r) => setTimeout(r, 2000))
  }
}
