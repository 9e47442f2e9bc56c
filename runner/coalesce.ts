// The outcomes of a batch's executions, written together. Each run of a batch publishes its next
// record and snapshot as soon as its execution ends; when executions end one after another (an app
// answering its calls in turn), each publish would be a write of its own. Held while other
// executions of the runner are still in flight (at most `maxWaitMs`), they leave as one write per
// output. A batch ends only once all its runs settled, so holding costs the next batch nothing;
// the wait bounds how late a run's snapshot and signals may be seen.
import type { Output } from '../bus/output.ts'

export interface Coalescer {
  /** Brackets an execution: publishes wait while any is in flight. */
  started(): void
  ended(): void
  wrap<T>(output: Output<T>): Output<T>
}

export function createCoalescer(maxWaitMs: number): Coalescer {
  let inFlight = 0
  let timer: NodeJS.Timeout | undefined
  type Held = { values: unknown[]; waiters: Array<{ resolve(): void; reject(err: unknown): void }> }
  const held = new Map<Output<unknown>, Held>()

  function flush(): void {
    clearTimeout(timer)
    timer = undefined
    for (const [output, batch] of held) {
      held.delete(output)
      output.publish(batch.values).then(
        () => {
          for (const w of batch.waiters) w.resolve()
        },
        (err) => {
          for (const w of batch.waiters) w.reject(err)
        },
      )
    }
  }

  return {
    started() {
      inFlight++
    },
    ended() {
      inFlight--
      if (inFlight === 0 && held.size > 0) flush()
    },
    wrap<T>(output: Output<T>): Output<T> {
      return {
        publish(values: T[]): Promise<void> {
          if (inFlight === 0 && held.size === 0) return output.publish(values)
          return new Promise<void>((resolve, reject) => {
            const key = output as Output<unknown>
            const batch = held.get(key) ?? { values: [], waiters: [] }
            held.set(key, batch)
            batch.values.push(...values)
            batch.waiters.push({ resolve, reject })
            if (inFlight === 0) queueMicrotask(flush)
            else timer ??= setTimeout(flush, maxWaitMs)
          })
        },
      }
    },
  }
}
