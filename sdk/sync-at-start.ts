// `sluice dev -u URL` (SLUICE_APP_URLS): each app is synced at start and, until it answers, again
// with backoff, as Inngest's dev server does; an app started after Sluice is picked up by itself.
import type { Logger } from 'pino'
import { backoffDelayMs, retryPolicies } from '../core/retry.ts'
import type { Apps } from './apps.ts'

export function createAppSyncAtStart(deps: { apps: Apps; log: Logger }, config: { urls: string[] }) {
  const timers = new Set<NodeJS.Timeout>()
  let stopped = false
  const policy = retryPolicies.appSync

  function attempt(url: string, n: number): void {
    deps.apps.sync(url).then(
      (app) => deps.log.info({ app: app.appId, url, functions: app.functions.length }, 'app synced at start'),
      (err) => {
        if (stopped) return
        if (n === 0) deps.log.warn({ url, code: err.code, message: err.message }, 'app not synced yet; trying again')
        const timer = setTimeout(
          () => {
            timers.delete(timer)
            attempt(url, n + 1)
          },
          backoffDelayMs(policy, Math.min(n, 10)),
        )
        timers.add(timer)
      },
    )
  }

  return {
    async start() {
      for (const url of config.urls) attempt(url, 0)
    },
    async stop() {
      stopped = true
      for (const timer of timers) clearTimeout(timer)
    },
  }
}
