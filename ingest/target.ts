// Which environment an Event API request writes to: DESIGN.md, "Environments".
import { SluiceError } from '../core/errors.ts'
import type { Envs } from '../control/envs.ts'
import type { Keys } from '../control/keys.ts'
import type { EnvDoc } from '../control/types.ts'
import { BRANCH_GROUP, PRODUCTION } from '../core/env-names.ts'

export interface Target {
  env: EnvDoc
  keyId?: string
}

export function resolveTarget(
  key: string,
  envHeader: string | undefined,
  devMode: boolean,
  keys: Keys,
  envs: Envs,
): Target {
  const keyDoc = key === '' ? undefined : keys.authenticate(key)
  if (devMode) {
    // Dev Server: any key or none maps to production; x-service-env still selects a branch.
    return { env: envHeader ? branchEnv(envHeader, envs) : envs.get(PRODUCTION)!, keyId: keyDoc?.id }
  }
  if (!keyDoc) throw new SluiceError('KEY_INVALID', 'event key: unknown or revoked')
  if (keyDoc.env === BRANCH_GROUP) {
    if (!envHeader) throw new SluiceError('ENV_REQUIRED', 'x-service-env: required with a branch environment key')
    return { env: branchEnv(envHeader, envs), keyId: keyDoc.id }
  }
  const env = envs.get(keyDoc.env)
  if (!env) throw new SluiceError('ENV_NOT_FOUND', `environment "${keyDoc.env}" of this key no longer exists`)
  return { env, keyId: keyDoc.id }
}

export function branchEnv(name: string, envs: Envs): EnvDoc {
  const env = envs.get(name)
  if (!env || env.kind !== 'branch' || env.archivedAt !== undefined)
    throw new SluiceError('ENV_NOT_FOUND', `x-service-env: no active branch environment named "${name}"`)
  return env
}
