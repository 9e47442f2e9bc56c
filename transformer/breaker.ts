// Per-transform fair-share state (a transform: webhook ID + transform version). Two rules:
// - Slow lane: a transform that hit a limit, or ran over its time budget in the shared lane, is
//   moved to the slow lane for `pauseMs`, so it stops holding back other webhooks' partitions
//   and isolates there. A proven transform (one that finished a call within its limits) moves
//   only after `kills` overruns in a row: on a loaded host a good one may overrun now and then.
// - Circuit breaker: one that keeps hitting the sandbox's CPU, wall-time or memory limit is
//   paused; while paused its requests are recorded as failed with TRANSFORM_PAUSED, kept whole
//   for replay: nothing is lost.
// Saving a new transform is a new version, so a fix takes effect at once. State is per process:
// each transformer node protects its own isolates, and a restart forgets it.

export interface BreakerConfig {
  /** Limit kills in a row that pause a transform. */
  kills: number
  /** How long a paused transform stays paused, and a slow one in the slow lane. */
  pauseMs: number
}

/**
 * Whether a transform may run now, and where. `probation`: one request at a time, for a
 * transform not yet proven within its limits in this process, or whose last call hit one.
 */
export type Admission =
  | { kind: 'run'; lane: 'shared' | 'slow'; probation: boolean }
  | { kind: 'paused'; until: number; kills: number }

/** `limit`: stopped by a limit; `overBudget`: the shared lane gave up on it; `ok`: finished within its limits. */
export type RunOutcome = 'ok' | 'limit' | 'overBudget'

interface State {
  kills: number
  overruns: number
  proven: boolean
  pausedUntil: number
  slowUntil: number
}

/** Past this many transforms tracked, ones that ran fine are forgotten (they start on probation again). */
const MAX_TRACKED = 10_000

export function createBreaker(config: BreakerConfig, now: () => number = Date.now) {
  const states = new Map<string, State>()
  const fresh: State = { kills: 0, overruns: 0, proven: false, pausedUntil: 0, slowUntil: 0 }
  const stateOf = (key: string): State => states.get(key) ?? fresh
  function put(key: string, state: State): void {
    if (states.size >= MAX_TRACKED && !states.has(key)) {
      for (const [k, s] of states) if (s.kills === 0 && s.slowUntil <= now()) states.delete(k)
    }
    states.set(key, state)
  }
  return {
    admit(key: string): Admission {
      const state = stateOf(key)
      const at = now()
      if (state.pausedUntil > at) return { kind: 'paused', until: state.pausedUntil, kills: state.kills }
      const lane = state.slowUntil > at ? 'slow' : 'shared'
      return { kind: 'run', lane, probation: !state.proven || state.kills > 0 }
    },
    record(key: string, outcome: RunOutcome): void {
      const state = stateOf(key)
      const at = now()
      // A call within limits clears the kill count, not the slow lane: a transform near its
      // budget would otherwise flap between lanes, costing the shared lane a budget each time.
      if (outcome === 'ok') {
        put(key, { ...state, kills: 0, overruns: 0, proven: true })
        return
      }
      if (outcome === 'overBudget') {
        const overruns = state.overruns + 1
        const slow = !state.proven || overruns >= config.kills
        put(key, { ...state, overruns, slowUntil: slow ? at + config.pauseMs : state.slowUntil })
        return
      }
      const kills = state.kills + 1
      // After a pause the first kill re-opens it: the probe showed nothing changed.
      const pausedUntil = kills >= config.kills ? at + config.pauseMs : 0
      // The probe after a pause runs in the slow lane too.
      const slowUntil = Math.max(at, pausedUntil) + config.pauseMs
      put(key, { ...state, kills, pausedUntil, slowUntil })
    },
  }
}

export type Breaker = ReturnType<typeof createBreaker>
