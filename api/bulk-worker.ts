// Bulk cancel and replay, worked through in the background by whichever api process holds a job's
// lease (renewed every page, so another process takes over one whose holder died). Each action is
// idempotent, so a page done twice (a crash before its progress was saved) changes nothing more:
// a cancel of an ended run is dropped, a replay's new run has an ID derived from the job and the run,
// and a retry continues a failed run at the seq its snapshot names.
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import type { EventRecord } from '../core/event.ts'
import { seededUlids, ulidTime } from '../core/ids.ts'
import { sleep } from '../core/retry.ts'
import { firstRecord, snapshotOf, type FunctionRecord } from '../core/run-record.ts'
import type { RunDoc } from '../core/run-doc.ts'
import type { BulkJobDoc, ControlStore, FunctionDoc } from '../control/types.ts'
import { cancelSignal, isCancellable } from '../core/run-cancel.ts'
import { retryOfFailedRun } from '../core/run-retry.ts'
import { runEvents } from './run-events.ts'
import type { RunStore } from '../store/runs-types.ts'
import type { EventStore } from '../store/types.ts'
import { page } from './bulk-filter.ts'

export interface BulkWorkerDeps {
  control: ControlStore
  runs: RunStore
  events: EventStore
  functionRuns(fn: { env: string; key: string }): Output<FunctionRecord>
  snapshots: Output<RunDoc>
  functionOf(env: string, key: string): FunctionDoc | undefined
  routeKeyOf(fn: FunctionDoc, event: EventRecord): string | undefined
  log: Logger
}

const LEASE_MS = 30_000
const IDLE_MS = 1000
const owner = `${hostname()}:${process.pid}`

export function createBulkWorker(deps: BulkWorkerDeps) {
  const { control, log } = deps
  let stopping = new AbortController()
  let loop: Promise<void> | undefined

  async function act(job: BulkJobDoc, run: RunDoc): Promise<boolean> {
    const fn = deps.functionOf(run.env, run.functionId)
    const started = await runEvents(deps.events, run)
    if (!started) return false
    const { event, events } = started
    const routeKey = fn ? deps.routeKeyOf(fn, event) : undefined
    const route = routeKey === undefined ? {} : { routeKey }
    const target = deps.functionRuns({ env: run.env, key: run.functionId })
    if (job.action === 'cancel') {
      if (!isCancellable(run)) return false
      await target.publish([{ ...cancelSignal(run.runId, { kind: 'api' }, Date.now()), ...route }])
      return true
    }
    if (job.mode === 'retry') {
      if (run.status !== 'failed') return false
      const { record, snapshot } = retryOfFailedRun(run, event, events)
      await target.publish([{ ...record, ...route }])
      await deps.snapshots.publish([snapshot])
      return true
    }
    if (!fn) return false // the function is no longer served: nothing would run it
    const record = {
      ...firstRecord(event, run.functionId, Date.now()),
      // A batch run replays whole: its events, not gathered again with live ones (runner/gate.ts).
      ...(events && { events }),
      runId: replayRunId(job.id, run.runId),
      ...route,
    }
    await target.publish([record])
    await deps.snapshots.publish([snapshotOf(record, 'queued')])
    return true
  }

  /** One page of a job, and its progress saved; the lease renewed with it. */
  async function step(job: BulkJobDoc): Promise<void> {
    const { scanned, matched, next } = await page(deps.runs, job.filter, job.cursor)
    let done = 0
    let skipped = 0
    for (const run of matched)
      if (await act(job, run)) done++
      else skipped++
    const updated: BulkJobDoc = {
      ...job,
      scanned: job.scanned + scanned,
      matched: job.matched + matched.length,
      done: job.done + done,
      skipped: job.skipped + skipped,
      cursor: next,
      status: next === null ? 'done' : 'running',
      updatedAt: Date.now(),
      lease: { owner, until: Date.now() + LEASE_MS },
    }
    await control.put('job', job.id, updated)
  }

  async function work(): Promise<void> {
    while (!stopping.signal.aborted) {
      const job = control
        .list('job')
        .find((j) => j.status === 'running' && (!j.lease || j.lease.owner === owner || j.lease.until < Date.now()))
      if (!job) {
        await sleep(IDLE_MS, stopping.signal)
        continue
      }
      try {
        await step(job)
      } catch (err) {
        log.warn({ err, job: job.id }, 'bulk action page failed; trying again')
        await sleep(IDLE_MS, stopping.signal)
      }
    }
  }

  return {
    async start() {
      stopping = new AbortController()
      loop = work()
    },
    async stop() {
      stopping.abort()
      await loop
    },
  }
}

/** A replayed run's ID: from the job and the original run, so a page done twice starts it once. */
function replayRunId(jobId: string, runId: string): string {
  const entropy = createHash('sha256').update(`${jobId}\0${runId}`).digest().subarray(0, 10)
  return seededUlids(`${ulidTime(runId)},${entropy.toString('base64')}`, 1)[0]
}
