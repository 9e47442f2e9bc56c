// CLI commands that manage a running server through its REST API.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { callJson } from './api-json.ts'
import { apiTarget } from '../config/api-target.ts'
import { schemasDraftCommand } from './schema-draft.ts'

const OPTIONS = {
  url: { type: 'string' },
  'signing-key': { type: 'string' },
  env: { type: 'string' },
  key: { type: 'string' },
  branch: { type: 'boolean' },
  'max-body-bytes': { type: 'string' },
  'max-events-per-second': { type: 'string' },
  'skip-held': { type: 'boolean' },
  function: { type: 'string' },
  status: { type: 'string' },
  event: { type: 'string' },
  after: { type: 'string' },
  before: { type: 'string' },
  mode: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'schema-mode': { type: 'string' },
  'unknown-names': { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  out: { type: 'string' },
  role: { type: 'string' },
  'expires-in-days': { type: 'string' },
  'password-file': { type: 'string' },
  to: { type: 'string' },
} as const

export async function controlCommand(command: string, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true })
  const target = apiTarget({ url: values.url, signingKey: values['signing-key'] })
  const [verb, arg, third] = positionals
  const envQuery = values.env ? `?env=${encodeURIComponent(values.env)}` : ''
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(target, method, path, body, headers)
  switch (`${command} ${['send', 'audit', 'backup'].includes(command) ? '' : verb}`.trim()) {
    case 'backup':
      if (!values.to) {
        process.stderr.write('sluice backup: --to DIR is required (a directory that does not exist yet)\n')
        return 2
      }
      // The server writes it: a relative DIR means one under this shell's directory, as the server sees it.
      return call('POST', '/v1/backups', { to: resolve(values.to) })
    case 'audit': {
      const q = new URLSearchParams()
      if (values.since) q.set('since', values.since)
      if (values.limit) q.set('limit', values.limit)
      if (values.env) q.set('env', values.env)
      return call('GET', `/v1/audit${q.size > 0 ? `?${q}` : ''}`)
    }
    case 'keys create':
      return call('POST', '/v1/keys', { env: values.env ?? 'production' })
    case 'keys list':
      return call('GET', '/v1/keys')
    case 'keys revoke':
      return call('DELETE', `/v1/keys/${encodeURIComponent(arg ?? '')}`)
    case 'envs create':
      return call('POST', '/v1/envs', {
        name: arg,
        branch: values.branch ?? false,
        ...(values['max-body-bytes'] && { max_body_bytes: Number(values['max-body-bytes']) }),
        ...(values['max-events-per-second'] && { max_events_per_second: Number(values['max-events-per-second']) }),
        ...(values['schema-mode'] && { schema_mode: values['schema-mode'] }),
        ...(values['unknown-names'] && { unknown_names: values['unknown-names'] }),
      })
    case 'envs set':
      return call('PATCH', `/v1/envs/${encodeURIComponent(arg ?? '')}`, {
        ...(values['max-body-bytes'] && { max_body_bytes: Number(values['max-body-bytes']) }),
        ...(values['max-events-per-second'] && { max_events_per_second: Number(values['max-events-per-second']) }),
        ...(values['schema-mode'] && { schema_mode: values['schema-mode'] }),
        ...(values['unknown-names'] && { unknown_names: values['unknown-names'] }),
      })
    case 'envs list':
      return call('GET', '/v1/envs')
    case 'tokens create':
      return call('POST', '/v1/tokens', {
        name: arg,
        role: values.role,
        ...(values.env && { envs: values.env.split(',') }),
        ...(values['expires-in-days'] && { expires_in_days: Number(values['expires-in-days']) }),
      })
    case 'users add': {
      const file = values['password-file']
      let password: string
      try {
        password = file ? (await readFile(file, 'utf8')).replace(/\r?\n$/, '') : randomBytes(15).toString('base64url')
      } catch (err) {
        process.stderr.write(`sluice users add: --password-file: ${(err as Error).message}\n`)
        return 2
      }
      const body = { email: arg, password, role: values.role, ...(values.env && { envs: values.env.split(',') }) }
      // A made-up password is printed once, beside the user; one from a file never is.
      return request(target, 'POST', '/v1/users', body, {}, (answer) =>
        JSON.stringify(file ? answer : { ...(answer as object), password }, null, 2),
      )
    }
    case 'users list':
      return call('GET', '/v1/users')
    case 'users remove':
      return call('DELETE', `/v1/users/${encodeURIComponent(arg ?? '')}`)
    case 'tokens list':
      return call('GET', '/v1/tokens')
    case 'tokens remove':
      return call('DELETE', `/v1/tokens/${encodeURIComponent(arg ?? '')}`)
    case 'apps sync':
      return call('POST', '/v1/apps', { url: arg, ...(values.env && { env: values.env }) })
    case 'apps list':
      return call('GET', `/v1/apps${envQuery}`)
    case 'apps remove':
      return call('DELETE', `/v1/apps/${encodeURIComponent(arg ?? '')}${envQuery}`)
    case 'envs archive':
      return call('POST', `/v1/envs/${encodeURIComponent(arg ?? '')}/archive`)
    case 'schemas push': {
      let schema: unknown
      try {
        schema = JSON.parse(await readFile(third ?? '', 'utf8'))
      } catch (err) {
        process.stderr.write(`sluice schemas push: FILE must be a JSON Schema file (${(err as Error).message})\n`)
        return 2
      }
      return call('PUT', `/v1/schemas/${encodeURIComponent(arg ?? '')}${envQuery}`, { schema })
    }
    case 'schemas pull':
      // The schema alone, so `sluice schemas pull NAME > NAME.json` round-trips through push.
      return request(target, 'GET', `/v1/schemas/${encodeURIComponent(arg ?? '')}${envQuery}`, undefined, {}, (body) =>
        JSON.stringify((body as { data: { schema: unknown } }).data.schema, null, 2),
      )
    case 'schemas list':
      return call('GET', `/v1/schemas${envQuery}`)
    case 'schemas draft':
      return schemasDraftCommand(target, arg ?? '', values)
    case 'functions list':
      return call('GET', `/v1/functions${envQuery}`)
    case 'functions pause':
      return call('POST', `/v1/functions/${encodeURIComponent(arg ?? '')}/pause${envQuery}`, {})
    case 'functions resume':
      return call('POST', `/v1/functions/${encodeURIComponent(arg ?? '')}/resume${envQuery}`, {
        skip_held: values['skip-held'] ?? false,
      })
    case 'runs bulk':
      if (arg === 'status') return call('GET', `/v1/runs/bulk${third ? `/${encodeURIComponent(third)}` : ''}`)
      return call('POST', values['dry-run'] ? '/v1/runs/bulk/dry-run' : '/v1/runs/bulk', {
        action: arg,
        ...(values.mode && { mode: values.mode }),
        filter: {
          ...(values.function && { function: values.function }),
          ...(values.env && { env: values.env }),
          ...(values.status && { status: values.status }),
          ...(values.event && { event_name: values.event }),
          ...(values.after && { queued_after: values.after }),
          ...(values.before && { queued_before: values.before }),
        },
      })
    case 'send': {
      let event: unknown
      try {
        event = JSON.parse(verb ?? '')
      } catch {
        process.stderr.write(
          'sluice send: the argument must be a JSON event, e.g. \'{"name":"app/user.created","data":{}}\'\n',
        )
        return 2
      }
      return call(
        'POST',
        `/e/${encodeURIComponent(values.key ?? target.eventKey ?? 'dev')}`,
        event,
        values.env ? { 'x-service-env': values.env } : {},
      )
    }
    default:
      process.stderr.write(`sluice ${command}: unknown subcommand "${verb ?? ''}" (see sluice help)\n`)
      return 2
  }
}

export async function request(
  target: { url: string; signingKey?: string },
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  /** What of a successful answer to print; the whole answer by default. */
  shown?: (body: unknown) => string,
): Promise<number> {
  const answer = await callJson(target, method, path, body, headers)
  if (answer.ok) process.stdout.write(`${shown ? shown(answer.body) : JSON.stringify(answer.body, null, 2)}\n`)
  else process.stderr.write(`${answer.text.startsWith('cannot reach') ? answer.text : formatJson(answer.text)}\n`)
  return answer.ok ? 0 : 1
}

function formatJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
