// `sluice alerts …`: alert rules and incidents through a running server's REST API.
import { parseArgs } from 'node:util'
import { apiTarget } from '../config/api-target.ts'
import { request } from './control.ts'

const OPTIONS = {
  url: { type: 'string' },
  'signing-key': { type: 'string' },
  webhook: { type: 'string' },
  function: { type: 'string' },
  env: { type: 'string' },
  metric: { type: 'string' },
  threshold: { type: 'string' },
  window: { type: 'string' },
  endpoint: { type: 'string' },
  status: { type: 'string' },
} as const

export const ALERTS_USAGE = `  alerts  create NAME (--webhook ID | --function KEY [--env ENV]) --metric M --threshold N
                  [--window SECONDS] --endpoint URL   (prints the whsec_ signing secret once)
           list | get ID | delete ID | incidents [--status open|resolved]`

export async function alertsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true })
  const target = apiTarget({ url: values.url, signingKey: values['signing-key'] })
  const [verb, arg = ''] = positionals
  const call = (method: string, url: string, body?: unknown) => request(target, method, url, body, {})
  switch (verb) {
    case 'create':
      return call('POST', '/v1/alerts', {
        name: arg,
        ...(values.webhook !== undefined && { webhook_id: values.webhook }),
        ...(values.function !== undefined && { function: values.function }),
        ...(values.env !== undefined && { env: values.env }),
        metric: values.metric,
        threshold: values.threshold === undefined ? undefined : Number(values.threshold),
        ...(values.window !== undefined && { window_seconds: Number(values.window) }),
        endpoint: values.endpoint,
      })
    case 'list':
      return call('GET', '/v1/alerts')
    case 'get':
      return call('GET', `/v1/alerts/${encodeURIComponent(arg)}`)
    case 'delete':
      return call('DELETE', `/v1/alerts/${encodeURIComponent(arg)}`)
    case 'incidents':
      return call('GET', `/v1/alerts/incidents${values.status ? `?status=${encodeURIComponent(values.status)}` : ''}`)
    default:
      process.stderr.write(`sluice alerts: unknown subcommand "${verb ?? ''}"\n${ALERTS_USAGE}\n`)
      return 2
  }
}
