// Flow-control state read and written while a batch is handled: reads go to the runner state once per
// key, writes are kept here and saved with the batch (StateUpdate.flow), in one atomic write.
import type { RunnerState } from './state.ts'

export interface FlowView {
  get<T>(key: string): Promise<T | null>
  set(key: string, value: unknown): void
  /** What changed, for StateUpdate.flow; forgotten once taken. */
  take(): Array<{ key: string; value: string | null }>
}

export function createFlowView(state: RunnerState): FlowView {
  const values = new Map<string, string | null>()
  const changed = new Set<string>()
  return {
    async get<T>(key: string) {
      if (!values.has(key)) values.set(key, (await state.flowGet([key]))[0])
      const value = values.get(key)
      return value === null || value === undefined ? null : (JSON.parse(value) as T)
    },
    set(key, value) {
      values.set(key, value === null ? null : JSON.stringify(value))
      changed.add(key)
    },
    take() {
      const writes = [...changed].map((key) => ({ key, value: values.get(key) ?? null }))
      changed.clear()
      return writes
    },
  }
}

/**
 * GCRA (the generic cell rate algorithm): `limit` per `periodMs`, `burst` of them at once. `tat` is the
 * theoretical arrival time of the next one. Answers when the next may go (now when `at <= nowMs`), and
 * the state after letting it go.
 */
export function gcra(tat: number | null, nowMs: number, limit: number, periodMs: number, burst: number) {
  const interval = periodMs / limit
  const start = Math.max(tat ?? nowMs, nowMs)
  const at = start - (burst - 1) * interval
  return { at: Math.max(at, nowMs), allowed: at <= nowMs, next: start + interval }
}
