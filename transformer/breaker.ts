// Per-transform circuit breaker: a transform (webhook ID + transform version) that keeps
// hitting the sandbox's CPU, wall-time or memory limit is paused, so its requests stop taking
// isolate time from every other webhook. While paused its requests are recorded as failed
// with TRANSFORM_PAUSED, kept whole for replay: nothing is lost. Saving a new transform is a
// new version, so a fix takes effect at once. State is per process: each transformer node
// protects its own isolates, and a restart forgets it (the next kills re-open it).

export interface BreakerConfig {
  /** Limit kills in a row that pause a transform. */
  kills: number
  /** How long a paused transform stays paused; after it, one request at a time probes it. */
  pauseMs: number
}

/** Whether a transform may run now: `run` (`probation`: one request at a time) or `paused` until a time. */
export type Admission = { kind: 'run'; probation: boolean } | { kind: 'paused'; until: number; kills: number }

interface State { kills: number; proven: boolean; pausedUntil: number }

/** Entries for transforms that ran fine and never hit a limit are dropped, past this many. */
const MAX_PROVEN = 10_000

export function createBreaker(config: BreakerConfig, now: () => number = Date.now) {
  const states = new Map<string, State>()
  const stateOf = (key: string): State => states.get(key) ?? { kills: 0, proven: false, pausedUntil: 0 }
  return {
    /**
     * A transform that has not yet finished a call within its limits in this process, or whose
     * last call hit one, runs one request at a time: a hostile transform reaches its pause after
     * `kills` calls, not after a whole batch of them.
     */
    admit(key: string): Admission {
      const state = stateOf(key)
      if (state.pausedUntil > now()) return { kind: 'paused', until: state.pausedUntil, kills: state.kills }
      return { kind: 'run', probation: !state.proven || state.kills > 0 }
    },
    /** `limit`: the call was stopped by a limit; `ok`: it finished within them (whatever it returned or threw). */
    record(key: string, outcome: 'ok' | 'limit'): void {
      const state = stateOf(key)
      if (outcome === 'ok') {
        if (states.size >= MAX_PROVEN && !states.has(key)) return
        states.set(key, { kills: 0, proven: true, pausedUntil: 0 })
        return
      }
      const kills = state.kills + 1
      // After a pause the first kill re-opens it: the probe showed nothing changed.
      const pausedUntil = kills >= config.kills ? now() + config.pauseMs : 0
      states.set(key, { kills, proven: state.proven, pausedUntil })
    },
  }
}

export type Breaker = ReturnType<typeof createBreaker>
