// The retention plan (store/retention-types.ts) from the environment documents: each one's own
// `retentionDays` over the server's defaults, kind by kind.
import { RETENTION_KINDS, type Cutoffs, type RetentionKind, type RetentionPlan } from '../store/retention-types.ts'
import type { EnvDoc } from './types.ts'

const DAY_MS = 24 * 60 * 60_000

/** The server's default retention per kind, in ms; 0 keeps every record. */
export type RetentionDefaults = Record<RetentionKind, number>

export function retentionPlan(envs: readonly EnvDoc[], defaults: RetentionDefaults, now: number): RetentionPlan {
  const fallback: Cutoffs = {}
  for (const kind of RETENTION_KINDS) if (defaults[kind] > 0) fallback[kind] = now - defaults[kind]
  const own = new Map<string, Cutoffs>()
  for (const env of envs) {
    const days = env.retentionDays
    if (days === undefined || RETENTION_KINDS.every((kind) => days[kind] === undefined)) continue
    const cutoffs: Cutoffs = { ...fallback }
    for (const kind of RETENTION_KINDS) {
      const d = days[kind]
      if (d !== undefined) cutoffs[kind] = now - d * DAY_MS
    }
    own.set(env.name, cutoffs)
  }
  return { envs: own, fallback }
}
