// The function registry: which functions are served, per environment, and what triggers them.
// Runners register what they serve; the router reads it to fan events out.
import type { ControlStore, FunctionDoc } from './types.ts'
import type { Envs } from './envs.ts'
import { PRODUCTION } from '../core/env-names.ts'
import { refuseUnroutedEnvLimit } from './flow-routing.ts'

export type FunctionRegistration = Omit<FunctionDoc, 'id' | 'registeredAt'>

/**
 * Which registrations a sync replaces: all of them (the embedded node serves every function),
 * those of some apps, or those of the apps (per environment) the syncing runner serves — a
 * distributed runner owns its apps, not the functions of other runners.
 */
export type SyncScope =
  | { kind: 'all' }
  | { kind: 'apps'; env: string; appIds: string[] }
  | { kind: 'served-apps' }
  /** An app served over HTTP (sdk/): its functions, which no runner's sync touches. */
  | { kind: 'app'; env: string; appId: string }

export const registrationId = (env: string, key: string) => `${env}/${key}`

export function createFunctionRegistry(control: ControlStore, envs: Envs) {
  /**
   * The docs, sorted, and the list they were sorted from. The event path asks for the functions on
   * every pass: sorting them all each time cost more with every function. Docs are replaced, never
   * edited, so the same docs in the same order are the same registry.
   */
  let sorted: { from: FunctionDoc[]; docs: FunctionDoc[] } | undefined
  function all(): FunctionDoc[] {
    const from = control.list('function')
    const same = sorted?.from.length === from.length && from.every((doc, i) => doc === sorted!.from[i])
    if (!same) sorted = { from, docs: [...from].sort((a, b) => a.id.localeCompare(b.id)) }
    return sorted!.docs
  }
  return {
    list(env?: string): FunctionDoc[] {
      return all().filter((f) => env === undefined || f.env === env)
    },
    /**
     * Makes the registry hold exactly `functions` within `scope`; creates branch environments on demand.
     * Refuses the whole set (FLOW_ENV_LIMIT_UNROUTED) if one has an env-scoped limit it cannot route by.
     */
    async sync(functions: FunctionRegistration[], scope: SyncScope): Promise<FunctionDoc[]> {
      // All checked before any is written: a refused function changes nothing.
      for (const f of functions)
        refuseUnroutedEnvLimit(`function "${f.functionId}" of app "${f.appId}" (env ${f.env})`, f.flow)
      const now = Date.now()
      const docs: FunctionDoc[] = []
      for (const f of functions) {
        // A runner serving a new branch name creates that branch environment (DESIGN.md, Environments).
        if (f.env !== PRODUCTION && !envs.get(f.env)) await envs.create({ name: f.env, branch: true })
        const id = registrationId(f.env, f.key)
        const previous = control.get('function', id)
        const doc: FunctionDoc = { ...f, id, registeredAt: previous?.registeredAt ?? now }
        if (!previous || JSON.stringify(previous) !== JSON.stringify(doc)) await control.put('function', id, doc)
        docs.push(doc)
      }
      const kept = new Set(docs.map((d) => d.id))
      const servedApps = new Set(functions.map((f) => `${f.env}\0${f.appId}`))
      for (const doc of control.list('function')) {
        // An app's functions (runtime http) are synced by the app alone, never by a runner's sync.
        const inScope =
          scope.kind === 'app'
            ? doc.runtime !== undefined && doc.env === scope.env && doc.appId === scope.appId
            : doc.runtime === undefined &&
              (scope.kind === 'all' ||
                (scope.kind === 'apps' && doc.env === scope.env && scope.appIds.includes(doc.appId)) ||
                (scope.kind === 'served-apps' && servedApps.has(`${doc.env}\0${doc.appId}`)))
        if (inScope && !kept.has(doc.id)) await control.delete('function', doc.id)
      }
      return docs
    },
  }
}

export type FunctionRegistry = ReturnType<typeof createFunctionRegistry>
