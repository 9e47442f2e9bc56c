// The wait matcher: one consumer group on `waits`. Registrations, removals and candidate events of a
// match key arrive in order on one partition; an event resumes every wait of its key it matches
// (received after the wait began, passing its `if`) and cancels every run whose cancellation it
// matches, once: a matched wait is forgotten in the same batch. Signals go to the runs' function
// topics before the batch commits; a crash repeats them, and the runner's marks drop repeats.
import type { Logger } from 'pino'
import type { Batch, Bus, Subscription } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import type { EventRecord } from '../core/event.ts'
import { compileExpression } from '../core/expression.ts'
import { sleep } from '../core/retry.ts'
import type { FunctionRecord, RunSignal } from '../core/run-record.ts'
import { waitCodec } from './waits-topic.ts'
import { matchKey, type WaitRegistration } from './waits-types.ts'
import type { WaitStore } from './waits-store.ts'
import { asTrigger } from './routes.ts'
import { waitsMatched } from './metrics.ts'

export interface MatcherDeps {
  bus: Bus
  /** A function's topic, where its runs' signals go. */
  functionRuns(fn: { env: string; key: string }): Output<FunctionRecord>
  openStore(partition: number): Promise<WaitStore>
  log: Logger
}

export interface MatcherConfig {
  inputTopic: string
  group: string
  maxBatchRecords: number
  /** How often expired waits are forgotten. */
  expireIntervalMs: number
}

const EXPIRE_PAGE = 1000

export function createMatcher(deps: MatcherDeps, config: MatcherConfig) {
  const { log } = deps
  const stores = new Map<number, WaitStore>()
  let subscription: Subscription | undefined
  let expiring: Promise<void> | undefined
  const stopping = new AbortController()

  async function handle(batch: Batch): Promise<void> {
    const store = stores.get(batch.partition)
    if (!store) throw new Error(`wait matcher: partition ${batch.partition} has no open store`)
    // This batch's own registrations and removals, seen by its later events before they are written.
    const added = new Map<string, WaitRegistration>()
    const removed = new Set<string>()
    const signals: Array<{ target: WaitRegistration['target']; signal: RunSignal }> = []
    const messages = batch.records.map(({ key, value }) => ({ key, message: waitCodec.decode(value) }))
    // The stored waits of every key an event of the batch has, in one read.
    const found = await store.findMany(messages.filter((m) => m.message.kind === 'event').map((m) => m.key))
    for (const { key, message } of messages) {
      if (message.kind === 'register') {
        added.set(message.wait.waitId, message.wait)
        removed.delete(message.wait.waitId)
      } else if (message.kind === 'remove') {
        added.delete(message.waitId)
        removed.add(message.waitId)
      } else {
        // An event message's key is the match key it was routed to.
        const event = message.event
        const candidates = [...(found.get(key) ?? []), ...[...added.values()].filter((w) => matchKey(w) === key)]
        for (const wait of candidates) {
          if (removed.has(wait.waitId) || !matches(wait, event)) continue
          signals.push({ target: wait.target, signal: signalFor(wait, event) })
          added.delete(wait.waitId)
          removed.add(wait.waitId)
        }
      }
    }
    if (signals.length > 0) {
      await publishSignals(signals)
      waitsMatched.inc(signals.length)
    }
    await store.apply({ put: [...added.values()], remove: [...removed] })
  }

  async function publishSignals(signals: Array<{ target: WaitRegistration['target']; signal: RunSignal }>) {
    const byFunction = new Map<string, { target: WaitRegistration['target']; signals: RunSignal[] }>()
    for (const { target, signal } of signals) {
      const key = `${target.env}\0${target.functionKey}`
      const entry = byFunction.get(key) ?? byFunction.set(key, { target, signals: [] }).get(key)!
      entry.signals.push(signal)
    }
    await Promise.all(
      [...byFunction.values()].map(({ target, signals }) =>
        deps.functionRuns({ env: target.env, key: target.functionKey }).publish(signals),
      ),
    )
  }

  /** Forgets expired waits now and then: their runs timed out (or their cancellations did). */
  async function expireLoop(): Promise<void> {
    while (!stopping.signal.aborted) {
      await sleep(config.expireIntervalMs, stopping.signal)
      for (const store of new Set(stores.values())) {
        try {
          for (let ids = await store.expired(Date.now(), EXPIRE_PAGE); ids.length > 0; ) {
            await store.apply({ put: [], remove: ids })
            ids = ids.length < EXPIRE_PAGE ? [] : await store.expired(Date.now(), EXPIRE_PAGE)
          }
        } catch (err) {
          log.warn({ err }, 'forgetting expired waits failed; trying again later')
        }
      }
    }
  }

  return {
    async start() {
      subscription = await deps.bus.subscribe({
        group: config.group,
        topics: [config.inputTopic],
        maxBatchRecords: config.maxBatchRecords,
        handler: handle,
        onAssign: async (assigned) => {
          for (const p of assigned.flatMap((a) => a.partitions)) stores.set(p, await deps.openStore(p))
        },
        onRevoke: async (revoked) => {
          for (const p of revoked.flatMap((a) => a.partitions)) {
            const store = stores.get(p)
            stores.delete(p)
            if (store && ![...stores.values()].includes(store)) await store.close()
          }
        },
      })
      expiring = expireLoop()
    },
    async stop() {
      stopping.abort()
      await subscription?.stop()
      await expiring
    },
  }
}

function matches(wait: WaitRegistration, event: EventRecord): boolean {
  if (event.receivedAt < wait.sinceMs || event.receivedAt > wait.expiresAt) return false
  if (wait.if === undefined) return true
  const compiled = compileExpression(wait.if, ['event', 'async'])
  return compiled.ok && compiled.value({ event: wait.trigger ?? {}, async: asTrigger(event) })
}

function signalFor(wait: WaitRegistration, event: EventRecord): RunSignal {
  const { runId, seq, routeKey } = wait.target
  const route = routeKey === undefined ? {} : { routeKey }
  if (wait.kind === 'cancel')
    return {
      runId,
      ...route,
      signal: {
        kind: 'cancel',
        at: event.receivedAt,
        cause: { kind: 'event', eventId: event.internalId, eventName: event.name },
      },
    }
  return { runId, ...route, signal: { kind: 'event', seq: seq!, event } }
}
