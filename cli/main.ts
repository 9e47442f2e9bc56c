// The `sluice` command.
import { parseArgs } from 'node:util'
import {
  DEFAULTS,
  SECRET_FIELDS,
  SOURCES,
  checkRunnerConfig,
  flagName,
  loadConfig,
  runnerConfig,
  type Config,
  type Flags,
} from './config.ts'
import { controlCommand } from './control.ts'
import { webhooksCommand, WEBHOOKS_USAGE } from './webhooks.ts'

const BOOLEAN_FLAGS = new Set(['watch', 'kafkaTls'])
// Every setting is a flag (config.ts names them); secrets also as --x-file.
const SERVER_OPTIONS: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {
  ...Object.fromEntries(
    Object.keys(SOURCES).map((field) => [flagName(field), { type: BOOLEAN_FLAGS.has(field) ? 'boolean' : 'string' }]),
  ),
  ...Object.fromEntries(SECRET_FIELDS.map((field) => [`${flagName(field)}-file`, { type: 'string' }])),
  role: { type: 'string', multiple: true },
}

const CONTROL_NOTE = `Control commands talk to a running server: --url (SLUICE_URL, default http://127.0.0.1:8288),
--signing-key (SLUICE_SIGNING_KEY). In distributed mode point --url at the api role.`

const USAGE = `usage: sluice <command>
  dev     [--port 8288] [--host 127.0.0.1] [--data-dir .sluice] [--functions FILE] [--watch]
  start   [--role ROLE…] [--port …] [--data-dir …] [--signing-key …]   (embedded unless SLUICE_KAFKA_BROKERS is set)
  runner  --functions FILE [--watch] [--port …] [--data-dir …] [--signing-key …]   (serves FILE's functions)
  keys    create --env ENV | list | revoke KEY_ID
  envs    create NAME [--branch] [--max-body-bytes N] [--max-events-per-second N] | list | archive NAME
  send    JSON [--key EVENT_KEY] [--env BRANCH]
${WEBHOOKS_USAGE}
${CONTROL_NOTE}
sluice <command> --help: the command's own usage and settings.`

/** `sluice <command> --help`: each command's own usage; the server commands list every setting. */
const COMMAND_USAGE: Record<string, () => string> = {
  dev: () => `usage: sluice dev [--port 8288] [--host 127.0.0.1] [--data-dir .sluice] [--functions FILE] [--watch]
  A development server: every role in one process, open REST API, any event key.\n${settingsHelp()}`,
  start: () => `usage: sluice start [--role ROLE…] [--port …] [--data-dir …] [--signing-key …]
  Embedded (one process, RocksDB) unless SLUICE_KAFKA_BROKERS is set; then the roles named by --role
  (ingest, transformer, dedup, router, sink, runner, api; default all) on Kafka and ClickHouse.\n${settingsHelp()}`,
  runner: () => `usage: sluice runner --functions FILE [--watch] [settings…]
  Serves FILE's functions: against Kafka the runner role only; embedded a whole node.\n${settingsHelp()}`,
  keys: () => `usage: sluice keys create --env ENV | list | revoke KEY_ID\n${CONTROL_NOTE}`,
  envs: () => `usage: sluice envs create NAME [--branch] [--max-body-bytes N] [--max-events-per-second N]
                   | list | archive NAME\n${CONTROL_NOTE}`,
  send: () => `usage: sluice send JSON [--key EVENT_KEY] [--env BRANCH]   (key also from SERVICE_EVENT_KEY)
${CONTROL_NOTE}`,
  webhooks: () => `usage: sluice ${WEBHOOKS_USAGE.trimStart()}\n${CONTROL_NOTE}`,
}

function settingsHelp(): string {
  const defaults = DEFAULTS as Record<string, unknown>
  const rows = Object.entries(SOURCES).map(([field, [envVar]]) => {
    const value = defaults[field]
    const shown = value === undefined || (Array.isArray(value) && value.length === 0) ? '' : ` (default ${value})`
    const secret = (SECRET_FIELDS as readonly string[]).includes(field)
    const file = secret ? `, or --${flagName(field)}-file / ${envVar}_FILE` : ''
    return `  --${flagName(field)}  ${envVar}${shown}${file}`
  })
  return `Settings (flag, environment variable; docs/configuration.md says what each does):\n${rows.join('\n')}`
}

/** The configuration `sluice dev|start|runner <args>` runs with (also what the Helm chart's test checks its Deployments against). */
export function serverConfig(command: 'dev' | 'start' | 'runner', args: string[], env?: NodeJS.ProcessEnv): Config {
  const { values } = parseArgs({ args, options: SERVER_OPTIONS, strict: true })
  const flags: Flags = {}
  for (const field of Object.keys(SOURCES)) flags[field] = values[flagName(field)] as string | boolean | undefined
  for (const field of SECRET_FIELDS) flags[`${field}File`] = values[`${flagName(field)}-file`] as string | undefined
  flags.roles = (values.role as string[] | undefined)?.join(',')
  const config = loadConfig(command === 'runner' ? 'start' : command, flags, env)
  if (command !== 'runner') return config
  checkRunnerConfig(config, false)
  return runnerConfig(config)
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command !== undefined && COMMAND_USAGE[command] && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(COMMAND_USAGE[command]() + '\n')
    return 0
  }
  if (command === 'dev' || command === 'start' || command === 'runner') {
    // Only the server commands load the server (RocksDB, fastify, the stages): control commands start at once.
    const { serve } = await import('./serve.ts')
    await serve(command, serverConfig(command, rest))
    return -1 // keeps running
  }
  if (command === 'keys' || command === 'envs' || command === 'send') return controlCommand(command, rest)
  if (command === 'webhooks') return webhooksCommand(rest)
  process.stderr.write(USAGE + '\n')
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2
}
