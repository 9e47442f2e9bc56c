// People: users with an email and a password (argon2id, @node-rs/argon2), each with a role and
// optionally a list of environments, as tokens have; and their sessions. A session's ID is the
// `sluice_session` cookie; it is stored as its sha256 with the user it belongs to, a CSRF token and an
// expiry, in the control plane, so every api process knows it and a sign-out or a user's removal ends it
// everywhere. Neither a password nor its hash nor a session ID is ever answered, logged or audited.
import { createHash, randomBytes } from 'node:crypto'
import { hash, verify, type Options } from '@node-rs/argon2'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'
import { ROLES, type Role } from '../core/permissions.ts'
import type { ControlStore, SessionDoc, UserDoc } from './types.ts'
import type { Envs } from './envs.ts'

export const MIN_PASSWORD = 12
const MAX_PASSWORD = 1024
export const SESSION_MS = 12 * 60 * 60_000
const EMAIL = /^[^\s@]+@[^\s@]+$/
/** Argon2id (the binding's `Algorithm.Argon2id`, a const enum), with its default memory and passes. */
const ARGON2: Options = { algorithm: 2 as Options['algorithm'] }

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex')
const normal = (email: string) => email.trim().toLowerCase()

/** Verified against when the email is unknown, so an unknown email takes as long as a wrong password. */
let decoy: Promise<string> | undefined

export function createUsers(control: ControlStore, envs: Envs) {
  const byEmail = (email: string) => control.list('user').find((u) => u.email === normal(email))

  function checkEnvs(list: readonly string[] | undefined) {
    for (const [i, env] of (list ?? []).entries())
      if (env !== BRANCH_GROUP && !envs.get(env))
        throw new SluiceError('ENV_NOT_FOUND', `envs[${i}]: environment "${env}" does not exist`)
  }

  async function endSessionsOf(userId: string) {
    for (const s of control.list('session')) if (s.userId === userId) await control.delete('session', s.id)
  }

  return {
    list: (): UserDoc[] => control.list('user').sort((a, b) => a.createdAt - b.createdAt),
    get: (id: string) => control.get('user', id),
    byEmail,

    /** A user signing in with a password (`password`) or arriving from SSO (`sso`: no password). */
    async add(input: {
      email: string
      password?: string
      role: string
      envs?: string[]
      sso?: { issuer: string; subject: string }
    }): Promise<UserDoc> {
      const email = normal(input.email)
      if (!EMAIL.test(email) || email.length > 254)
        throw new SluiceError('REQUEST_INVALID', 'email: must be an email address (name@example.com)')
      if (byEmail(email)) throw new SluiceError('CONFLICT', `email: a user "${email}" exists; remove it first`)
      if (!(ROLES as readonly string[]).includes(input.role))
        throw new SluiceError('REQUEST_INVALID', `role: must be one of ${ROLES.join(', ')}`)
      if (!input.sso) {
        const length = input.password?.length ?? 0
        if (length < MIN_PASSWORD || length > MAX_PASSWORD)
          throw new SluiceError('REQUEST_INVALID', `password: from ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`)
      }
      checkEnvs(input.envs)
      const doc: UserDoc = {
        id: `usr_${newUlid()}`,
        email,
        role: input.role as Role,
        ...(input.envs && input.envs.length > 0 && { envs: input.envs }),
        ...(input.password !== undefined && !input.sso && { passwordHash: await hash(input.password, ARGON2) }),
        ...(input.sso && { sso: input.sso }),
        createdAt: Date.now(),
      }
      await control.put('user', doc.id, doc)
      return doc
    },

    /** An SSO user's role and environments follow the provider's claim at each sign-in. */
    async update(id: string, patch: { role: Role; envs?: string[] }): Promise<UserDoc> {
      const doc = control.get('user', id)
      if (!doc) throw new SluiceError('NOT_FOUND', `user "${id}" does not exist`)
      const { envs: _old, ...rest } = doc
      const updated: UserDoc = {
        ...rest,
        role: patch.role,
        ...(patch.envs && patch.envs.length > 0 && { envs: patch.envs }),
      }
      await control.put('user', id, updated)
      return updated
    },

    async remove(id: string): Promise<UserDoc> {
      const doc = control.get('user', id)
      if (!doc) throw new SluiceError('NOT_FOUND', `user "${id}" does not exist`)
      await control.delete('user', id)
      await endSessionsOf(id)
      return doc
    },

    /** The user when `password` is theirs; undefined otherwise, after the same work. */
    async checkPassword(email: string, password: string): Promise<UserDoc | undefined> {
      const user = byEmail(email)
      if (password.length > MAX_PASSWORD) return undefined
      if (!user?.passwordHash) {
        decoy ??= hash(randomBytes(16).toString('hex'), ARGON2)
        await verify(await decoy, password).catch(() => false)
        return undefined
      }
      return (await verify(user.passwordHash, password).catch(() => false)) ? user : undefined
    },

    /** A new session for `user`: the cookie's value and the CSRF token, each shown once. */
    async startSession(
      user: UserDoc,
      nowMs = Date.now(),
    ): Promise<{ session: string; csrf: string; expiresAt: number }> {
      const session = `sls_${randomBytes(32).toString('base64url')}`
      const csrf = randomBytes(24).toString('base64url')
      const doc: SessionDoc = {
        id: sha256(session),
        userId: user.id,
        csrf,
        createdAt: nowMs,
        expiresAt: nowMs + SESSION_MS,
      }
      await control.put('session', doc.id, doc)
      return { session, csrf, expiresAt: doc.expiresAt }
    },

    /** The session and its user, while both exist and the session has not expired. */
    session(session: string, nowMs = Date.now()): { session: SessionDoc; user: UserDoc } | undefined {
      if (!session.startsWith('sls_')) return undefined
      const doc = control.get('session', sha256(session))
      if (!doc || doc.expiresAt <= nowMs) return undefined
      const user = control.get('user', doc.userId)
      return user ? { session: doc, user } : undefined
    },

    async endSession(session: string): Promise<void> {
      const id = sha256(session)
      if (control.get('session', id)) await control.delete('session', id)
    },

    /** Sessions past their expiry, deleted (each api process calls it now and then). */
    async sweep(nowMs = Date.now()): Promise<void> {
      for (const s of control.list('session')) if (s.expiresAt <= nowMs) await control.delete('session', s.id)
    },
  }
}

export type Users = ReturnType<typeof createUsers>
