// CLI commands that manage a running server through its REST API.
import { parseArgs } from 'node:util'
import { apiTarget } from './config.ts'

const OPTIONS = {
  url: { type: 'string' },
  'signing-key': { type: 'string' },
  env: { type: 'string' },
  key: { type: 'string' },
  branch: { type: 'boolean' },
  'max-body-bytes': { type: 'string' },
  'max-events-per-second': { type: 'string' },
} as const

export async function controlCommand(command: string, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true })
  const target = apiTarget({ url: values.url, signingKey: values['signing-key'] })
  const [verb, arg] = positionals
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(target, method, path, body, headers)
  switch (`${command} ${command === 'send' ? '' : verb}`.trim()) {
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
      })
    case 'envs list':
      return call('GET', '/v1/envs')
    case 'envs archive':
      return call('POST', `/v1/envs/${encodeURIComponent(arg ?? '')}/archive`)
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
): Promise<number> {
  let response: Response
  try {
    response = await fetch(target.url + path, {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(target.signingKey && { authorization: `Bearer ${target.signingKey}` }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  } catch (err) {
    process.stderr.write(
      `cannot reach Sluice at ${target.url}: ${(err as Error).message}. Is it running (npm start)? Set --url or SLUICE_URL.\n`,
    )
    return 1
  }
  const text = await response.text()
  ;(response.ok ? process.stdout : process.stderr).write(formatJson(text) + '\n')
  return response.ok ? 0 : 1
}

function formatJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
