import { setTimeout as sleep } from 'node:timers/promises'

export type PollOptions = {
  what: string
  timeoutMs: number
  intervalMs?: number
  /** Called between attempts; throwing from it aborts the wait (e.g. the process died). */
  abortIf?: () => string | undefined
}

/**
 * Waits for a service to come up: `check` resolving to true means ready.
 * Errors from `check` count as "not yet" because a booting server refuses
 * connections; the last one is reported if the deadline passes.
 */
export async function pollUntil(check: () => Promise<boolean>, options: PollOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      if (await check()) return
    } catch (error) {
      lastError = error
    }
    const abortReason = options.abortIf?.()
    if (abortReason !== undefined) throw new Error(`${options.what}: ${abortReason}`)
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? `: ${lastError.message}` : ''
      throw new Error(`${options.what}: not ready after ${options.timeoutMs} ms${detail}`, { cause: lastError })
    }
    await sleep(options.intervalMs ?? 250)
  }
}
