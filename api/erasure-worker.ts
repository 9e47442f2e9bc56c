// Erasure jobs, worked through in the background by whichever api process holds a job's lease
// (renewed at every step, so another process takes over one whose holder died). A step either
// finds a page of the environment's events and records what matched as `pending`, or deletes the
// pending batch and adds it to the counts: the batch is saved before it is deleted, so a restart
// deletes it again (idempotent) and counts it once, and the cursor never passes what is not done.
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { sleep } from '../core/retry.ts'
import type { ControlStore, ErasureDoc } from '../control/types.ts'
import type { ErasureStore, ErasureTarget } from '../store/erasure-types.ts'

export interface ErasureWorkerDeps {
  control: ControlStore
  erasure: ErasureStore
  log: Logger
}

/** Events of the environment read per step. */
const PAGE_EVENTS = 1000
const LEASE_MS = 60_000
const IDLE_MS = 1000
/** Failed steps in a row before the job is `failed`. */
const MAX_FAILURES = 5
const owner = `${hostname()}:${process.pid}`

export function createErasureWorker(deps: ErasureWorkerDeps) {
  const { control, log } = deps
  let stopping = new AbortController()
  let loop: Promise<void> | undefined

  const targetOf = (job: ErasureDoc): ErasureTarget => ({
    env: job.env,
    path: job.path.split('.').slice(1),
    value: job.value as ErasureTarget['value'],
  })

  async function step(job: ErasureDoc): Promise<ErasureDoc> {
    const lease = { owner, until: Date.now() + LEASE_MS }
    if (job.pending) {
      await deps.erasure.erase(job.pending)
      const { pending, ...rest } = job
      const counts = {
        events: job.counts.events + pending.events.length,
        runs: job.counts.runs + pending.runs.length,
        requests: job.counts.requests + pending.requests.length,
      }
      if (job.scanned) {
        const { value: _, lease: __, ...ended } = rest
        return { ...ended, counts, status: 'done', failures: 0, updatedAt: Date.now() }
      }
      return { ...rest, counts, failures: 0, updatedAt: Date.now(), lease }
    }
    const page = await deps.erasure.find(targetOf(job), PAGE_EVENTS, job.cursor)
    return {
      ...job,
      pending: page.batch,
      cursor: page.next,
      scanned: page.next === null,
      failures: 0,
      updatedAt: Date.now(),
      lease,
    }
  }

  const claimable = (j: ErasureDoc) =>
    j.status === 'running' && (!j.lease || j.lease.owner === owner || j.lease.until < Date.now())

  async function work(): Promise<void> {
    while (!stopping.signal.aborted) {
      const job = control.list('erasure').find(claimable)
      if (!job) {
        await sleep(IDLE_MS, stopping.signal)
        continue
      }
      try {
        await control.put('erasure', job.id, await step(job))
      } catch (err) {
        // The error's code only: a store's message may quote the query, and so the erased value.
        const code = String((err as { code?: unknown }).code ?? (err as Error).name ?? 'Error')
        const failures = job.failures + 1
        log.warn({ code, job: job.id, failures }, 'erasure step failed; trying again')
        const failed = failures >= MAX_FAILURES
        const { value: _, lease: __, ...rest } = job
        const updated: ErasureDoc = failed
          ? { ...rest, status: 'failed', failures, error: `deleting failed (${code})`, updatedAt: Date.now() }
          : { ...job, failures, updatedAt: Date.now() }
        await control.put('erasure', job.id, updated).catch(() => {})
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
