// Liveness and readiness of one process (docs/operations.md). /healthz: the process serves HTTP.
// /readyz: the role's connections are up and its state is in place; otherwise 503 with the reasons,
// and 503 from the first moment of a shutdown, so load balancers stop sending before the listener closes.

/** Resolves to undefined when fine, else a short reason (never an error's text: it may carry an address or a user). */
export type Probe = () => Promise<string | undefined>

/** A plain HTTP answer, served by fastify on the HTTP roles' port and by the ops listener on the others. */
export interface OpsResponse {
  status: number
  contentType: string
  body: string
}
export type OpsRoute = () => Promise<OpsResponse>

export interface Health {
  /** Readiness also asks `probe` (bounded by the probe timeout; one call in flight at a time). */
  addProbe(name: string, probe: Probe): void
  /** The stages have started: connections made, control plane loaded, first assignments restored. */
  markStarted(): void
  /** A shutdown began: not ready from now on. */
  markStopping(): void
  /** Counts work that makes the process not ready while it lasts (a partition being restored). */
  track<T>(what: string, work: Promise<T>): Promise<T>
  /** Routes by path; `/metrics` is served beside these (core/metrics-route.ts). */
  routes: Record<string, OpsRoute>
}

const PROBE_TIMEOUT_MS = 2000

export function createHealth(): Health {
  let phase: 'starting' | 'started' | 'stopping' = 'starting'
  const probes = new Map<string, Probe>()
  const inFlight = new Map<string, Promise<string | undefined>>()
  const tracked = new Map<string, number>()

  // A probe that hangs (a SIGSTOPped broker never answers) must not pile up calls.
  const ask = (name: string, probe: Probe): Promise<string | undefined> => {
    let pending = inFlight.get(name)
    if (!pending) {
      pending = probe()
        .catch(() => 'not reachable')
        .finally(() => inFlight.delete(name))
      inFlight.set(name, pending)
    }
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS)
    })
    return Promise.race([pending, timeout]).finally(() => clearTimeout(timer))
  }

  async function readiness(): Promise<Record<string, string>> {
    if (phase === 'stopping') return { process: 'shutting down' }
    if (phase === 'starting') return { process: 'starting' }
    const reasons: Record<string, string> = {}
    for (const [what, count] of tracked) if (count > 0) reasons[what] = `${count} in progress`
    const answers = await Promise.all([...probes].map(async ([name, probe]) => [name, await ask(name, probe)] as const))
    for (const [name, reason] of answers) if (reason !== undefined) reasons[name] = reason
    return reasons
  }

  const json = (status: number, body: object): OpsResponse => ({
    status,
    contentType: 'application/json',
    body: JSON.stringify(body),
  })

  return {
    addProbe: (name, probe) => void probes.set(name, probe),
    markStarted: () => {
      if (phase === 'starting') phase = 'started'
    },
    markStopping: () => {
      phase = 'stopping'
    },
    async track(what, work) {
      tracked.set(what, (tracked.get(what) ?? 0) + 1)
      try {
        return await work
      } finally {
        tracked.set(what, tracked.get(what)! - 1)
      }
    },
    routes: {
      '/healthz': async () => json(200, { status: 'ok' }),
      '/readyz': async () => {
        const reasons = await readiness()
        if (Object.keys(reasons).length > 0) return json(503, { status: 'not_ready', reasons })
        return json(200, { status: 'ready' })
      },
    },
  }
}
