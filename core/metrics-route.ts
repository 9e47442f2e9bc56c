// GET /metrics of a process (docs/operations.md, "Metrics"): the registry of core/metrics.ts, served
// beside /healthz and /readyz on the ops port (sluice dev: its HTTP port; SLUICE_METRICS_LISTENER may
// add the HTTP port), plus what only the process lifecycle knows: its roles and whether it is ready.
import { gauge, metricsText, startProcessMetrics } from './metrics.ts'
import { packageVersion } from './version.ts'
import type { OpsRoute } from './health.ts'

const info = gauge<'version' | 'roles'>({
  name: 'sluice_info',
  help: 'Always 1: the version and the roles this process plays',
  labelNames: ['version', 'roles'],
})

const readyRoutes = new Set<OpsRoute>()
gauge({
  name: 'sluice_ready',
  help: '1 when /readyz answers 200 (connections up, state restored), else 0',
  async collect() {
    if (readyRoutes.size === 0) return
    const answers = await Promise.all([...readyRoutes].map((readyz) => readyz()))
    this.set(answers.every((a) => a.status === 200) ? 1 : 0)
  },
})

/** Starts the process metrics; `readyz` is asked at each scrape until the returned stop(). */
export function serveMetrics(roles: readonly string[], readyz: OpsRoute): { route: OpsRoute; stop(): void } {
  startProcessMetrics()
  info.set({ version: packageVersion(), roles: [...roles].sort().join(',') }, 1)
  readyRoutes.add(readyz)
  return {
    route: async () => ({ status: 200, ...(await metricsText()) }),
    stop: () => void readyRoutes.delete(readyz),
  }
}
