// Retention per environment (docs/operations.md, "Retention"): what a pass deletes, as cutoffs
// per kind of record. An environment's own retention (control/retention.ts builds the plan from
// the environment documents) wins over the server's default, kind by kind; a pass deletes what
// was made before its environment's cutoff. Times are those of the records' IDs (ULIDs): an
// event's internal ID, a run's ID (its event's time) and a webhook request's ID (its receive time).

export const RETENTION_KINDS = ['events', 'runs', 'requests'] as const
export type RetentionKind = (typeof RETENTION_KINDS)[number]

/** Per kind, the time (ms) before which records go; absent keeps every record of that kind. */
export type Cutoffs = Partial<Record<RetentionKind, number>>

export interface RetentionPlan {
  /** The environments with a retention of their own, each merged over the default. */
  envs: ReadonlyMap<string, Cutoffs>
  /** Every other environment's (and a record without one, such as a failed webhook request's). */
  fallback: Cutoffs
}

export function cutoffsOf(plan: RetentionPlan, env: string | null): Cutoffs {
  return (env === null ? undefined : plan.envs.get(env)) ?? plan.fallback
}

/** The cutoffs of `kind` the plan holds: every environment's and the fallback's (undefined: keeps all). */
export function cutoffsOfKind(plan: RetentionPlan, kind: RetentionKind): Array<number | undefined> {
  return [...plan.envs.values(), plan.fallback].map((c) => c[kind])
}

/** The latest cutoff of `kind`: nothing made after it goes. undefined when no environment deletes any. */
export function latestCutoff(plan: RetentionPlan, kind: RetentionKind): number | undefined {
  const defined = cutoffsOfKind(plan, kind).filter((c) => c !== undefined)
  return defined.length === 0 ? undefined : Math.max(...defined)
}

/** Whether any environment deletes anything. */
export function deletesAnything(plan: RetentionPlan): boolean {
  return RETENTION_KINDS.some((kind) => latestCutoff(plan, kind) !== undefined)
}

/** A store's retention pass (embedded: store/rocksdb-expire.ts; ClickHouse: store/clickhouse-retention.ts). */
export interface RetentionStore {
  /**
   * Deletes what the plan lets go. `sweepIds`: the embedded dedup id index too (a scan of it, so
   * about once per retention period); `signal` stops the pass between writes.
   */
  expire(plan: RetentionPlan, options?: { sweepIds?: boolean; signal?: AbortSignal }): Promise<void>
}
