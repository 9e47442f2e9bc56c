// API tokens: `Authorization: Bearer <token>` on the REST API, each with a role and optionally a list
// of environments. Shown once at creation, stored as sha256 under that hash, so a lookup is one get
// and a deletion (in any api process: the control plane replicates it) refuses the token at once.
import { createHash, randomBytes } from 'node:crypto'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import { ROLES, type Role } from '../core/permissions.ts'
import type { ControlStore, TokenDoc } from './types.ts'
import type { Envs } from './envs.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

const TOKEN_PREFIX = 'slt_'
const TOUCH_EVERY_MS = 60_000
const MAX_NAME = 100
const MAX_DAYS = 3650
const DAY_MS = 86_400_000

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex')

export function createTokens(control: ControlStore, envs: Envs) {
  return {
    /** The token's document when it is known and not expired; its last use recorded now and then. */
    authenticate(token: string, nowMs = Date.now()): TokenDoc | undefined {
      if (!token.startsWith(TOKEN_PREFIX)) return undefined
      const doc = control.get('token', hashOf(token))
      if (!doc || (doc.expiresAt !== undefined && doc.expiresAt <= nowMs)) return undefined
      const used = control.get('tokenUse', doc.id)
      if (used === undefined || nowMs - used.at >= TOUCH_EVERY_MS)
        control.put('tokenUse', doc.id, { id: doc.id, at: nowMs }).catch(() => {})
      return doc
    },
    list: (): TokenDoc[] => control.list('token').sort((a, b) => a.createdAt - b.createdAt),
    lastUsed: (id: string): number | undefined => control.get('tokenUse', id)?.at,
    async create(input: {
      name: string
      role: string
      envs?: string[]
      expiresInDays?: number
    }): Promise<{ doc: TokenDoc; token: string }> {
      const name = input.name.trim()
      if (name === '' || name.length > MAX_NAME)
        throw new SluiceError('REQUEST_INVALID', `name: from 1 to ${MAX_NAME} characters`)
      if (control.list('token').some((t) => t.name === name))
        throw new SluiceError('CONFLICT', `name: a token "${name}" exists; delete it or choose another name`)
      if (!(ROLES as readonly string[]).includes(input.role))
        throw new SluiceError('REQUEST_INVALID', `role: must be one of ${ROLES.join(', ')}`)
      for (const [i, env] of (input.envs ?? []).entries())
        if (env !== BRANCH_GROUP && !envs.get(env))
          throw new SluiceError('ENV_NOT_FOUND', `envs[${i}]: environment "${env}" does not exist`)
      const days = input.expiresInDays
      if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > MAX_DAYS))
        throw new SluiceError('REQUEST_INVALID', `expires_in_days: an integer from 1 to ${MAX_DAYS}`)
      const token = TOKEN_PREFIX + randomBytes(24).toString('base64url')
      const now = Date.now()
      const doc: TokenDoc = {
        id: `tok_${newUlid()}`,
        hash: hashOf(token),
        name,
        role: input.role as Role,
        ...(input.envs && input.envs.length > 0 && { envs: input.envs }),
        prefix: token.slice(0, 10),
        createdAt: now,
        ...(days !== undefined && { expiresAt: now + days * DAY_MS }),
      }
      await control.put('token', doc.hash, doc)
      return { doc, token }
    },
    async remove(id: string): Promise<TokenDoc> {
      const doc = control.list('token').find((t) => t.id === id)
      if (!doc) throw new SluiceError('NOT_FOUND', `token "${id}" does not exist`)
      await control.delete('token', doc.hash)
      if (control.get('tokenUse', id)) await control.delete('tokenUse', id)
      return doc
    },
  }
}

export type Tokens = ReturnType<typeof createTokens>
