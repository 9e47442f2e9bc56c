// Retention per environment in the embedded store (store/retention-types.ts): one pass deletes
// the events, runs and webhook requests of each environment made before its cutoffs.
// Events: whatever is older than the earliest cutoff of every environment that has events goes by
// range deletes (rocksdb-retention.ts, the server-wide way, reading nothing); an environment that
// keeps less than that has its older events found in its env index (G, one scan of what is past
// its cutoff) and removed by rewriting their milliseconds (rocksdb-remove.ts), since values are
// shared across environments. Runs and requests carry their environment in their documents, not
// their keys: the pass reads those made before the latest cutoff of any environment, oldest
// first, and deletes each whose environment's cutoff it is past. What a longer retention keeps is
// read again by every pass; a day's records at most are past one cutoff and not another's.
import { keyPrefix, keyRange } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { deleteEventsBefore } from './rocksdb-retention.ts'
import { afterPart, indexEntries, indexedPartOf, ulidFloor } from './rocksdb-index.ts'
import { removeEvents } from './rocksdb-remove.ts'
import { runDeleteOps } from './runs-rocksdb.ts'
import { requestDeleteOps } from './requests-rocksdb.ts'
import type { RunDoc } from './runs-types.ts'
import type { WebhookRequestRecord } from './requests-types.ts'
import { cutoffsOf, latestCutoff, type RetentionPlan } from './retention-types.ts'

/** Events removed, or records deleted, per write. */
const CHUNK = 1_000
/** The length prefix of an indexed part (rocksdb-index.ts keyPart). */
const PART_LENGTH = 4

export interface ExpireOptions {
  /** Also sweep the dedup id index (a scan of it: about once per retention period). */
  sweepIds?: boolean
  /** Stops the pass between writes. */
  signal?: AbortSignal
}

/** One retention pass over the embedded store. */
export async function expireEmbedded(rocks: Rocks, plan: RetentionPlan, options: ExpireOptions = {}): Promise<void> {
  await expireEvents(rocks, plan, options)
  if (options.signal?.aborted) return
  await expireRuns(rocks, plan, options.signal)
  if (options.signal?.aborted) return
  await expireRequests(rocks, plan, options.signal)
}

export async function expireEvents(rocks: Rocks, plan: RetentionPlan, options: ExpireOptions = {}): Promise<void> {
  const envs = await storedEnvs(rocks)
  const cutoffs = envs.map((env) => cutoffsOf(plan, env).events)
  // What every environment's retention lets go: range deletes, as the server-wide retention.
  const floor = cutoffs.length === 0 || cutoffs.includes(undefined) ? undefined : Math.min(...(cutoffs as number[]))
  if (floor !== undefined) await deleteEventsBefore(rocks, floor, options)
  for (const [i, env] of envs.entries()) {
    const cutoff = cutoffs[i]
    if (cutoff === undefined || (floor !== undefined && cutoff <= floor)) continue
    const { gte, lt } = keyRange('eventsByEnv', keyPartOf(env))
    const ids: string[] = []
    const range = { below: ulidFloor(cutoff), ...(floor !== undefined && { from: ulidFloor(floor) }) }
    for await (const entry of indexEntries(rocks, gte, lt, range)) {
      ids.push(entry.internalId)
      if (ids.length < CHUNK) continue
      await removeEvents(rocks, ids.splice(0))
      if (options.signal?.aborted) return
    }
    await removeEvents(rocks, ids)
  }
}

/** The environments with stored events: one seek apiece in the env index. */
async function storedEnvs(rocks: Rocks): Promise<string[]> {
  const { gte, lt } = keyRange('eventsByEnv')
  const envs: string[] = []
  for (let from = gte; ; ) {
    let part: string | undefined
    for await (const { key } of rocks.scan({ gte: from, lt, limit: 1 })) part = indexedPartOf(gte, key)
    if (part === undefined) return envs
    envs.push(part.slice(PART_LENGTH))
    from = afterPart(gte, part)
  }
}

const keyPartOf = (value: string) => value.length.toString(16).padStart(PART_LENGTH, '0') + value

export async function expireRuns(rocks: Rocks, plan: RetentionPlan, signal?: AbortSignal): Promise<void> {
  const latest = latestCutoff(plan, 'runs')
  if (latest === undefined) return
  const { gte } = keyRange('runs')
  let ops: WriteOp[] = []
  for await (const { value } of rocks.scan({ gte, lt: gte + ulidFloor(latest) })) {
    const run = JSON.parse(value.toString()) as RunDoc
    const cutoff = cutoffsOf(plan, run.env).runs
    if (cutoff === undefined || run.runId >= ulidFloor(cutoff)) continue
    ops.push(...runDeleteOps(run))
    if (ops.length < CHUNK) continue
    await rocks.write(ops)
    ops = []
    if (signal?.aborted) return
  }
  await rocks.write(ops)
}

/** Requests are keyed by webhook, then request ID: per webhook, those before the latest cutoff. */
export async function expireRequests(rocks: Rocks, plan: RetentionPlan, signal?: AbortSignal): Promise<void> {
  const latest = latestCutoff(plan, 'requests')
  if (latest === undefined) return
  const below = ulidFloor(latest)
  const { gte, lt } = keyRange('webhookRequests')
  let ops: WriteOp[] = []
  for (let from = gte; ; ) {
    let webhookId: string | undefined
    for await (const { key } of rocks.scan({ gte: from, lt, limit: 1 }))
      webhookId = key.slice(gte.length, key.indexOf('\0', gte.length))
    if (webhookId === undefined) break
    const prefix = keyPrefix('webhookRequests', `${webhookId}\0`)
    for await (const { value } of rocks.scan({ gte: prefix, lt: prefix + below })) {
      const record = JSON.parse(value.toString()) as WebhookRequestRecord
      const cutoff = cutoffsOf(plan, record.env).requests
      if (cutoff === undefined || record.request.requestId >= ulidFloor(cutoff)) continue
      ops.push(...requestDeleteOps(record))
      if (ops.length < CHUNK) continue
      await rocks.write(ops)
      ops = []
      if (signal?.aborted) return
    }
    from = keyPrefix('webhookRequests', `${webhookId}\u0001`)
  }
  await rocks.write(ops)
}
