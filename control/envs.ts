// Environments: `production` always exists; standard ones by name; branch ones form one group.
// The group (BRANCH_GROUP) has schema modes of its own, which a branch environment uses for each
// mode it has not set itself: a new branch checks events as the plan of its group says.
import { SluiceError } from '../core/errors.ts'
import { RETENTION_KINDS } from '../store/retention-types.ts'
import type { ControlStore, EnvDoc, RetentionDays, SchemaMode, UnknownNames } from './types.ts'
import { BRANCH_GROUP, PRODUCTION } from '../core/env-names.ts'

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/

export function createEnvs(control: ControlStore) {
  function get(name: string): EnvDoc | undefined {
    if (name === PRODUCTION) return control.get('env', name) ?? { name, kind: 'standard', createdAt: 0 }
    return control.get('env', name)
  }

  /** The branch group's modes: shaped as an environment, `off`/`allow` until set. */
  function group(): EnvDoc {
    return control.get('envGroup', BRANCH_GROUP) ?? { name: BRANCH_GROUP, kind: 'branch', createdAt: 0 }
  }

  async function updateGroup(patch: Limits): Promise<EnvDoc> {
    for (const [field, value] of [
      ['max_body_bytes', patch.maxBodyBytes],
      ['max_events_per_second', patch.maxEventsPerSecond],
    ] as const) {
      if (value !== undefined) {
        throw new SluiceError(
          'REQUEST_INVALID',
          `${field}: the branch group "${BRANCH_GROUP}" takes only schema_mode and unknown_names; set it per environment`,
        )
      }
    }
    const current = group()
    const updated: EnvDoc = { ...current, createdAt: current.createdAt || Date.now(), ...given(patch) }
    await control.put('envGroup', BRANCH_GROUP, updated)
    return updated
  }

  return {
    get,
    group,
    /** `env` with the modes it applies: a branch environment's unset ones are its group's. */
    inherited(env: EnvDoc): EnvDoc {
      if (env.kind !== 'branch' || (env.schemaMode !== undefined && env.unknownNames !== undefined)) return env
      const from = control.get('envGroup', BRANCH_GROUP)
      if (from === undefined) return env
      return {
        ...env,
        schemaMode: env.schemaMode ?? from.schemaMode,
        unknownNames: env.unknownNames ?? from.unknownNames,
      }
    },
    list(): EnvDoc[] {
      const stored = control.list('env')
      return stored.some((e) => e.name === PRODUCTION) ? stored : [get(PRODUCTION)!, ...stored]
    },
    async create(input: { name: string; branch?: boolean } & Limits): Promise<EnvDoc> {
      const { name, branch } = input
      // Also checked by the REST schema; kept for the other caller, function registration.
      if (!NAME.test(name)) {
        throw new SluiceError(
          'REQUEST_INVALID',
          'name: must be 1-64 characters of a-z, 0-9, ".", "_", "-", starting with a letter or digit',
        )
      }
      if (name === BRANCH_GROUP)
        throw new SluiceError('REQUEST_INVALID', `name: "${BRANCH_GROUP}" is reserved for the branch group`)
      if (get(name)) throw new SluiceError('CONFLICT', `name: environment "${name}" already exists`)
      const doc: EnvDoc = { name, kind: branch ? 'branch' : 'standard', createdAt: Date.now(), ...given(input) }
      await control.put('env', name, doc)
      return doc
    },
    /** `BRANCH_GROUP` changes the group's modes. */
    async update(name: string, patch: Limits): Promise<EnvDoc> {
      if (name === BRANCH_GROUP) return updateGroup(patch)
      const doc = get(name)
      if (!doc) throw new SluiceError('ENV_NOT_FOUND', `environment "${name}" does not exist`)
      const { retentionDays, ...rest } = patch
      const updated: EnvDoc = { ...doc, ...given(rest) }
      if (retentionDays !== undefined) {
        const days = mergeRetention(doc.retentionDays, retentionDays)
        if (days) updated.retentionDays = days
        else delete updated.retentionDays
      }
      await control.put('env', name, updated)
      return updated
    },
    async archive(name: string): Promise<EnvDoc> {
      const doc = get(name)
      if (!doc) throw new SluiceError('ENV_NOT_FOUND', `environment "${name}" does not exist`)
      if (doc.kind !== 'branch')
        throw new SluiceError('REQUEST_INVALID', `name: only branch environments are archived; "${name}" is not one`)
      const archived = { ...doc, archivedAt: doc.archivedAt ?? Date.now() }
      await control.put('env', name, archived)
      return archived
    },
  }
}

/** Ranges are the REST schema's (api/schemas.ts EnvLimits). */
interface Limits {
  maxBodyBytes?: number
  maxEventsPerSecond?: number
  schemaMode?: SchemaMode
  unknownNames?: UnknownNames
  /** Days per kind (the REST schema's range); null gives a kind back to the server's default. */
  retentionDays?: { [K in keyof RetentionDays]?: number | null }
}

/** `patch` over `days`, kind by kind; undefined once no kind has days of its own. */
function mergeRetention(days: RetentionDays | undefined, patch: NonNullable<Limits['retentionDays']>) {
  const merged: RetentionDays = { ...days }
  for (const kind of RETENTION_KINDS) {
    const d = patch[kind]
    if (d === null) delete merged[kind]
    else if (d !== undefined) merged[kind] = d
  }
  return Object.keys(merged).length === 0 ? undefined : merged
}

/** The limits given; absent ones are left as they are. */
function given(input: Limits): Omit<Limits, 'retentionDays'> & { retentionDays?: RetentionDays } {
  const { maxBodyBytes, maxEventsPerSecond, schemaMode, unknownNames, retentionDays } = input
  const days = retentionDays === undefined ? undefined : mergeRetention(undefined, retentionDays)
  return {
    ...(days !== undefined && { retentionDays: days }),
    ...(maxBodyBytes !== undefined && { maxBodyBytes }),
    ...(maxEventsPerSecond !== undefined && { maxEventsPerSecond }),
    ...(schemaMode !== undefined && { schemaMode }),
    ...(unknownNames !== undefined && { unknownNames }),
  }
}

export type Envs = ReturnType<typeof createEnvs>
