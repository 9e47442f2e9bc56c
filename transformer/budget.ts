// The shared lane's time budget: a transform call that has run for `budgetMs` in an isolate
// is given up on there, and the request goes to the slow lane, where it runs again under the
// full limits. The abandoned call is not run again (the sandbox drops a call whose signal
// aborted), so it costs the shared isolates at most its stop. For a proven transform queueing
// does not count; for one on probation it does: its wait for the isolates probation may use
// holds back its whole partition's batch, other webhooks' requests included.
import type { Sandbox } from './sandbox-types.ts'

export type Budgeted<T> = { kind: 'done'; value: T } | { kind: 'overBudget' }

/** Runs `work` with a sandbox whose calls are given up on after `budgetMs` of running. */
export async function withinBudget<T>(
  sandbox: Sandbox,
  budgetMs: number,
  work: (sandbox: Sandbox) => Promise<T>,
  probation = false,
): Promise<Budgeted<T>> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const over = new Promise<Budgeted<T>>((resolve) => {
    controller.signal.addEventListener('abort', () => resolve({ kind: 'overBudget' }), { once: true })
  })
  const onStart = () => {
    timer ??= setTimeout(() => controller.abort(), budgetMs)
  }
  if (probation) onStart()
  const budgeted: Sandbox = {
    run: (key, source, input) => sandbox.run(key, source, input, { signal: controller.signal, onStart, probation }),
    close: () => sandbox.close(),
  }
  const done = work(budgeted).then((value): Budgeted<T> => ({ kind: 'done', value }))
  try {
    return await Promise.race([done, over])
  } finally {
    clearTimeout(timer)
    done.catch(() => {}) // an abandoned call that later rejects (the sandbox closed) is nobody's concern
  }
}
