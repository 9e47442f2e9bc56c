// Event keys: shown once at creation, stored as sha256, revocable.
import { createHash, randomBytes } from 'node:crypto'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import type { ControlStore, KeyDoc } from './types.ts'
import type { Envs } from './envs.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

// Every Event API request authenticates; a server sees few distinct keys, so their hashes are kept.
const hashes = new Map<string, string>()
function hashKey(key: string): string {
  let hash = hashes.get(key)
  if (hash === undefined) {
    if (hashes.size >= 1000) hashes.clear() // random keys from a scanner must not grow it
    hash = createHash('sha256').update(key).digest('hex')
    hashes.set(key, hash)
  }
  return hash
}

export function createKeys(control: ControlStore, envs: Envs) {
  return {
    /** The key's document when it is known and not revoked. */
    authenticate(key: string): KeyDoc | undefined {
      const doc = control.get('key', hashKey(key))
      return doc && doc.revokedAt === undefined ? doc : undefined
    },
    list(): KeyDoc[] {
      return control.list('key').sort((a, b) => a.createdAt - b.createdAt)
    },
    async create(input: { env: unknown }): Promise<{ doc: KeyDoc; key: string }> {
      const env = input.env
      if (typeof env !== 'string')
        throw new SluiceError('REQUEST_INVALID', `env: must be an environment name or "${BRANCH_GROUP}"`)
      if (env !== BRANCH_GROUP) {
        const doc = envs.get(env)
        if (!doc) throw new SluiceError('ENV_NOT_FOUND', `env: environment "${env}" does not exist`)
        if (doc.kind === 'branch')
          throw new SluiceError(
            'REQUEST_INVALID',
            `env: "${env}" is a branch environment; branch keys belong to the group "${BRANCH_GROUP}"`,
          )
      }
      const key = 'sk_' + randomBytes(24).toString('base64url')
      const doc: KeyDoc = {
        id: 'key_' + newUlid(),
        hash: hashKey(key),
        env,
        prefix: key.slice(0, 9),
        createdAt: Date.now(),
      }
      await control.put('key', doc.hash, doc)
      return { doc, key }
    },
    async revoke(id: string): Promise<KeyDoc> {
      const doc = control.list('key').find((k) => k.id === id)
      if (!doc) throw new SluiceError('NOT_FOUND', `key "${id}" does not exist`)
      const revoked = { ...doc, revokedAt: doc.revokedAt ?? Date.now() }
      await control.put('key', doc.hash, revoked)
      return revoked
    },
  }
}

export type Keys = ReturnType<typeof createKeys>
