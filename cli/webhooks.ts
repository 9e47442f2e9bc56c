// `sluice webhooks …`: webhook management through a running server's REST API.
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { apiTarget } from '../config/api-target.ts'
import { request } from './control.ts'

const OPTIONS = {
  url: { type: 'string' },
  'signing-key': { type: 'string' },
  env: { type: 'string' },
  name: { type: 'string' },
  transform: { type: 'string' },
  'no-transform': { type: 'boolean' },
  'allow-ip': { type: 'string', multiple: true },
  'deny-ip': { type: 'string', multiple: true },
  'allow-event': { type: 'string', multiple: true },
  'deny-event': { type: 'string', multiple: true },
  verify: { type: 'string' },
  secret: { type: 'string' },
  'signature-header': { type: 'string' },
  'previous-secret': { type: 'string' },
  'public-url': { type: 'string' },
  'tolerance-seconds': { type: 'string' },
  'delivery-id': { type: 'string' },
  'no-verify': { type: 'boolean' },
  disable: { type: 'boolean' },
  enable: { type: 'boolean' },
  status: { type: 'string' },
} as const

export const WEBHOOKS_USAGE = `  webhooks create NAME [--env ENV|branch] [--transform FILE] [--allow-ip CIDR…] [--deny-ip CIDR…]
                  [--allow-event PATTERN…] [--deny-event PATTERN…]
                  [--verify PRESET --secret S [--signature-header H] [--previous-secret S] [--public-url URL]
                   [--tolerance-seconds N]] [--delivery-id HEADER|none]
           list [--env ENV] | get ID | delete ID
           pause ID | resume ID   (paused: requests are answered and captured, held until resume delivers them in order)
           update ID [--name N] [--transform FILE | --no-transform] [--allow-ip …] [--verify … | --no-verify] [--disable | --enable]
                  (a list flag given as --allow-ip= clears that list)
           requests ID [--status failed|delivered|unrouted|held]
           replay ID REQUEST_ID | replay ID [--status failed|unrouted]   (every request with that status)`

type Values = ReturnType<typeof parse>['values']
const parse = (args: string[]) => parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true })

/** The webhook fields the flags set, in the REST API's spelling. */
async function fields(values: Values): Promise<Record<string, unknown>> {
  const list = (v: string[] | undefined) => v?.filter((s) => s !== '')
  const body: Record<string, unknown> = {
    name: values.name,
    transform: values['no-transform']
      ? null
      : values.transform === undefined
        ? undefined
        : await readFile(values.transform, 'utf8'),
    allow_ips: list(values['allow-ip']),
    deny_ips: list(values['deny-ip']),
    allow_events: list(values['allow-event']),
    deny_events: list(values['deny-event']),
    verification: values['no-verify']
      ? null
      : values.verify === undefined
        ? undefined
        : {
            preset: values.verify,
            secret: values.secret,
            ...(values['signature-header'] && { header: values['signature-header'] }),
            ...(values['previous-secret'] && { previous_secret: values['previous-secret'] }),
            ...(values['public-url'] && { public_url: values['public-url'] }),
            // Sent as given: the server refuses a value that is not a whole number in range, naming the flag's field.
            ...(values['tolerance-seconds'] && { tolerance_seconds: Number(values['tolerance-seconds']) }),
          },
    delivery_id: values['delivery-id'],
    disabled: values.disable ? true : values.enable ? false : undefined,
  }
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined))
}

export async function webhooksCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args)
  const target = apiTarget({ url: values.url, signingKey: values['signing-key'] })
  const [verb, id = '', requestId] = positionals
  const path = `/v1/webhooks/${encodeURIComponent(id)}`
  const call = (method: string, url: string, body?: unknown) => request(target, method, url, body, {})
  switch (verb) {
    case 'create':
      return call('POST', '/v1/webhooks', {
        ...(await fields(values)),
        name: values.name ?? id,
        ...(values.env && { env: values.env }),
      })
    case 'list':
      return call('GET', '/v1/webhooks' + (values.env ? `?env=${encodeURIComponent(values.env)}` : ''))
    case 'get':
      return call('GET', path)
    case 'update':
      return call('PATCH', path, await fields(values))
    case 'delete':
      return call('DELETE', path)
    case 'pause':
    case 'resume':
      return call('POST', `${path}/${verb}`)
    case 'requests':
      return call('GET', `${path}/requests` + (values.status ? `?status=${encodeURIComponent(values.status)}` : ''))
    case 'replay':
      if (requestId) return call('POST', `${path}/requests/${encodeURIComponent(requestId)}/replay`)
      return call('POST', `${path}/requests/replay`, { status: values.status ?? 'failed' })
    default:
      process.stderr.write(`sluice webhooks: unknown subcommand "${verb ?? ''}"\n${WEBHOOKS_USAGE}\n`)
      return 2
  }
}
