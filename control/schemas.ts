// Event schemas: a JSON Schema for `data` per event name and environment, versioned, each new
// version checked against the previous one (control/schema-compat.ts). Kept in the control store,
// so every node holds them in memory and learns a new version as it learns any control write.
// A branch environment uses its own schema of a name, else its group's (env BRANCH_GROUP).
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { SluiceError } from '../core/errors.ts'
import type { Envs } from './envs.ts'
import { compileSchema, MAX_SCHEMA_BYTES } from './schema-compile.ts'
import { checkCompatible } from './schema-compat.ts'
import type { EventSchemaRegistry } from './schemas-registry.ts'
import type { ControlStore, EnvDoc, SchemaDoc, SchemaVersion } from './types.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

export interface SchemaLimits {
  maxNameLength: number
}

/** The latest version of a name's schema as it applies to an environment, compiled. */
export interface ActiveSchema {
  env: string
  version: number
  validate: ValidateFunction
}

const docId = (env: string, name: string) => `${env}:${name}`

/** How long a node answers from its lookup cache before it looks at the control store again. */
export const SCHEMA_REFRESH_MS = 250
/** Distinct names remembered per environment (hostile names could grow the cache without end). */
const MAX_CACHED_NAMES = 10_000

interface Lookup {
  active: ActiveSchema | undefined
  checkedAt: number
}

/**
 * `registry` (distributed mode, when a schema registry is configured): each version is registered
 * there first and its compatibility checker decides; the control store then carries the version to
 * every node. Without one, control/schema-compat.ts decides.
 */
/** Times a push is tried again after losing the compare-and-set to a concurrent one. */
const MAX_PUSH_ATTEMPTS = 8

function conflict(name: string, what: string, current: SchemaVersion | undefined): SluiceError {
  const at = current ? `version ${current.version}` : 'none'
  return new SluiceError('SCHEMA_VERSION_CONFLICT', `schema: ${what} for "${name}" (current ${at}); push it again`)
}

async function register(
  registry: EventSchemaRegistry,
  env: string,
  name: string,
  schema: unknown,
  latest: SchemaVersion | undefined,
): Promise<number> {
  const registered = await registry.register(env, name, schema as object)
  if (registered.ok) return registered.version
  const against = latest ? ` (against version ${latest.version})` : ''
  throw new SluiceError(registered.code, `schema: the schema registry refused it: ${registered.message}${against}`)
}

function refuseBreaking(latest: SchemaVersion, schema: unknown): void {
  const compatible = checkCompatible(latest.schema, schema as Record<string, unknown>)
  if (compatible.ok) return
  throw new SluiceError(
    'SCHEMA_BREAKING_CHANGE',
    `schema${compatible.pointer}: ${compatible.message} (against version ${latest.version})`,
  )
}

export function createSchemas(
  control: ControlStore,
  envs: Pick<Envs, 'get'>,
  limits: SchemaLimits,
  registry?: EventSchemaRegistry,
) {
  // One compiled validator per stored version, compiled on first use; a new version replaces it.
  const compiled = new Map<string, ActiveSchema>()
  // The hot path's lookup by environment, then name, with no key built per event: building and
  // hashing `<env>:<name>` cost more than validating the event. Refreshed every SCHEMA_REFRESH_MS.
  const lookups = new Map<string, Map<string, Lookup>>()

  function get(env: string, name: string): SchemaDoc | undefined {
    return control.get('schema', docId(env, name))
  }

  function compiledLatest(doc: SchemaDoc): ActiveSchema {
    const id = docId(doc.env, doc.name)
    const latest = doc.versions[doc.versions.length - 1]
    const cached = compiled.get(id)
    if (cached?.version === latest.version) return cached
    const result = compileSchema(latest.schema)
    // Stored versions compiled when pushed: a failure here is a bug, not bad input.
    if (!result.ok) throw new Error(`stored schema ${id} v${latest.version} does not compile: ${result.message}`)
    const active = { env: doc.env, version: latest.version, validate: result.validate }
    compiled.set(id, active)
    return active
  }

  return {
    get,
    /**
     * The schema of `name` in `env`: its own, or for a branch environment its group's. A version
     * pushed on another node applies here within SCHEMA_REFRESH_MS of reaching the control store.
     */
    active(env: EnvDoc, name: string, nowMs: number): ActiveSchema | undefined {
      let byName = lookups.get(env.name)
      if (byName === undefined) {
        byName = new Map()
        lookups.set(env.name, byName)
      }
      const hit = byName.get(name)
      if (hit !== undefined && nowMs - hit.checkedAt < SCHEMA_REFRESH_MS) return hit.active
      const doc = get(env.name, name) ?? (env.kind === 'branch' ? get(BRANCH_GROUP, name) : undefined)
      const active = doc && compiledLatest(doc)
      if (hit !== undefined) {
        hit.active = active
        hit.checkedAt = nowMs
      } else {
        if (byName.size >= MAX_CACHED_NAMES) byName.clear()
        byName.set(name, { active, checkedAt: nowMs })
      }
      return active
    },
    list(env?: string): SchemaDoc[] {
      const all = control.list('schema')
      const listed = env === undefined ? all : all.filter((doc) => doc.env === env)
      return listed.sort((a, b) => a.env.localeCompare(b.env) || a.name.localeCompare(b.name))
    },
    /** Stores a new version (or answers the latest when it is the same schema); refuses changing nothing. */
    async push(env: string, name: string, schema: unknown): Promise<{ doc: SchemaDoc; version: SchemaVersion }> {
      if (env !== BRANCH_GROUP && envs.get(env) === undefined)
        throw new SluiceError('ENV_NOT_FOUND', `env: no environment named "${env}" (nor the group "${BRANCH_GROUP}")`)
      if (name.length === 0 || name.length > limits.maxNameLength || !name.isWellFormed())
        throw new SluiceError('REQUEST_INVALID', `name: must be 1-${limits.maxNameLength} characters of Unicode`)
      const bytes = Buffer.byteLength(JSON.stringify(schema))
      if (bytes > MAX_SCHEMA_BYTES)
        throw new SluiceError('SCHEMA_INVALID', `schema: ${bytes} bytes, the limit is ${MAX_SCHEMA_BYTES}`)
      const result = compileSchema(schema)
      if (!result.ok) throw new SluiceError('SCHEMA_INVALID', `schema${result.pointer}: ${result.message}`)
      let registered: number | undefined
      // Compare-and-set on the document: a push that lost the race to another (this node's or any
      // other's) is checked again against the version that won, so none answered is lost.
      for (let attempt = 0; attempt < MAX_PUSH_ATTEMPTS; attempt++) {
        const doc = get(env, name)
        const versions = doc?.versions ?? []
        const latest = versions[versions.length - 1]
        const same = versions.find((v) => JSON.stringify(v.schema) === JSON.stringify(schema))
        if (same && (same === latest || registered === same.version)) return { doc: doc!, version: same }
        if (registry && registered === undefined) registered = await register(registry, env, name, schema, latest)
        if (!registry && latest) refuseBreaking(latest, schema)
        const number = registered ?? (latest?.version ?? 0) + 1
        if (versions.some((v) => v.version === number)) {
          // The registry gave this number to another schema: its subject and this document disagree.
          throw conflict(name, `version ${number} is already another schema`, latest)
        }
        const version: SchemaVersion = {
          version: number,
          schema: schema as Record<string, unknown>,
          createdAt: Date.now(),
        }
        const sorted = [...versions, version].sort((a, b) => a.version - b.version)
        const updated: SchemaDoc = { env, name, versions: sorted }
        if (await control.putIf('schema', docId(env, name), updated, doc)) {
          lookups.clear() // this node applies its own push at once
          return { doc: updated, version }
        }
      }
      const doc = get(env, name)
      throw conflict(name, `${MAX_PUSH_ATTEMPTS} concurrent pushes came first`, doc?.versions.at(-1))
    },
  }
}

export type Schemas = ReturnType<typeof createSchemas>
