// A paused function's new runs (POST /v1/functions/<key>/pause): their first records wait in the runner
// state, in arrival order, under a queue key of their own that no scheduler admits from. Once the
// function is resumed they are published again to its topic (and run as any new run), or, when the
// resume says so, end as skipped. A run already started goes on: only new runs are held.
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import type { FunctionRecord, RunRecord } from '../core/run-record.ts'
import type { PauseDoc } from '../control/types.ts'
import type { FunctionSpec } from '../core/function.ts'
import { sleep } from '../core/retry.ts'
import type { Outcome } from './outcome.ts'
import { skipped } from './cancel.ts'
import type { RunnerState } from './state.ts'

/** The queue key of held records: JSON keys never start with \0. */
export const HELD = '\u0000held'
const CHECK_MS = 1000
const PAGE = 500

/** Whether a record is a new run to hold: the function is paused, and it was not released already. */
export const holds = (record: RunRecord, paused: boolean): boolean =>
  record.seq === 0 && !record.released && !record.gather && paused

/** A held record: in the queue of held records, in arrival order. */
export const held = (record: RunRecord): RunRecord => ({ ...record, queue: { key: HELD, order: record.queuedAt } })

export interface HoldDeps {
  fn: FunctionSpec
  pauseOf(): PauseDoc | undefined
  self: Output<FunctionRecord>
  applyOnce(record: RunRecord, outcome: Outcome): Promise<void>
  states(): Iterable<RunnerState>
  log: Logger
}

export function createHold(deps: HoldDeps) {
  let stopping = new AbortController()
  let loop: Promise<void> | undefined

  /** Releases what was held once the function is resumed: published again, or skipped. */
  async function release(): Promise<void> {
    while (!stopping.signal.aborted) {
      const pause = deps.pauseOf()
      if (pause && !pause.paused)
        for (const state of new Set(deps.states()))
          try {
            for (
              let held = await state.queueHead(HELD, PAGE);
              held.length > 0;
              held = await state.queueHead(HELD, PAGE)
            ) {
              if (pause.skipHeld) {
                for (const r of held)
                  await deps.applyOnce(
                    r,
                    skipped(r, 'PAUSED', 'held while the function was paused, then skipped on resume', Date.now()),
                  )
                await state.save({
                  marks: held.map((r) => ({ runId: r.runId, mark: { seq: 0, state: 'ended' as const } })),
                  parked: [],
                  unparked: [],
                  dequeued: held,
                })
              } else {
                // Published again before being forgotten: a crash between the two publishes twice, and the mark drops one.
                await deps.self.publish(held.map(({ queue: _, ...record }) => ({ ...record, released: true })))
                await state.save({ marks: [], parked: [], unparked: [], dequeued: held })
              }
            }
          } catch (err) {
            deps.log.warn({ err }, 'releasing the runs held while paused failed; trying again')
          }
      await sleep(CHECK_MS, stopping.signal)
    }
  }

  return {
    /** Whether the function is paused now: its new runs are held. */
    paused(): boolean {
      return deps.pauseOf()?.paused === true
    },
    start(): void {
      stopping = new AbortController()
      loop = release()
    },
    async stop(): Promise<void> {
      stopping.abort()
      await loop
    },
  }
}

export type Hold = ReturnType<typeof createHold>
