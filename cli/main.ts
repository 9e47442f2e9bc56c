// The `sluice` command.
import { parseArgs } from 'node:util'
import { type Setting, rangeOf, shownDefault } from '../config/setting-kinds.ts'
import { SETTING_GROUPS, type SettingName, flagOf } from '../config/settings.ts'
import { controlCommand } from './control.ts'
import { webhooksCommand, WEBHOOKS_USAGE } from './webhooks.ts'
import { alertsCommand, ALERTS_USAGE } from './alerts.ts'
import { TYPES_USAGE } from './types.ts'

const CONTROL_NOTE = `Control commands talk to a running server: --url (SLUICE_URL, default http://127.0.0.1:8288),
--signing-key (SLUICE_SIGNING_KEY) or an API token (SLUICE_TOKEN). In distributed mode point --url at the api role.`

const USAGE = `usage: sluice <command>
  dev     [--port 8288] [--host 127.0.0.1] [--data-dir .sluice] [--functions FILE] [--watch] [-u APP_URL]
  start   [--role ROLE…] [--port …] [--data-dir …] [--signing-key …]   (embedded unless SLUICE_KAFKA_BROKERS is set)
  runner  --functions FILE [--watch] [--port …] [--data-dir …] [--signing-key …]   (serves FILE's functions)
  keys    create --env ENV | list | revoke KEY_ID
  tokens  create NAME --role viewer|editor|admin [--env ENV,…] [--expires-in-days N] | list | remove TOKEN_ID
  users   add EMAIL --role viewer|editor|admin [--env ENV,…] [--password-file FILE] | list | remove USER_ID
  audit   [--since MS] [--limit N] [--env ENV]   (who changed what, newest first; admins)
  backup  --to DIR   (a running embedded server copies its data dir to DIR, on its disk; admins)
  restore --from DIR --data-dir DATA_DIR   (puts a backup into a stopped server's new data dir)
  apps    sync URL | list | remove APP_ID   [--env ENV]   (apps on the Inngest SDKs, docs/inngest-sdk.md)
  envs    create NAME [--branch] [--schema-mode …] [--unknown-names …] [--max-… N] | list | archive NAME
          | set NAME|branch [--schema-mode off|warn|block] [--unknown-names allow|warn|block] [--max-… N]
  schemas push NAME FILE | pull NAME | list   [--env ENV (default production; "branch" for the branch group)]
          | draft NAME [--limit N] [--since TIME] [--out FILE]
  types   [--env ENV] [--out FILE]   (a TypeScript declaration of the schemas, for typed sends)
  send    JSON [--key EVENT_KEY] [--env BRANCH]
  functions list | pause KEY | resume KEY [--skip-held]   [--env ENV]
  runs    bulk cancel|replay [filter…] [--mode new|retry] [--dry-run] | bulk status [JOB_ID]
${WEBHOOKS_USAGE}
${ALERTS_USAGE}
${CONTROL_NOTE}
sluice <command> --help: the command's own usage and settings.`

/** `sluice <command> --help`: each command's own usage; the server commands list every setting. */
const COMMAND_USAGE: Record<string, () => string> = {
  dev: () => `usage: sluice dev [--port 8288] [--host 127.0.0.1] [--data-dir .sluice] [--functions FILE] [--watch] [-u APP_URL]
  A development server: every role in one process, open REST API, any event key.\n${settingsHelp()}`,
  start: () => `usage: sluice start [--role ROLE…] [--port …] [--data-dir …] [--signing-key …]
  Embedded (one process, RocksDB) unless SLUICE_KAFKA_BROKERS is set; then the roles named by --role
  (ingest, transformer, dedup, router, sink, runner, api; default all) on Kafka and ClickHouse.\n${settingsHelp()}`,
  runner: () => `usage: sluice runner --functions FILE [--watch] [settings…]
  Serves FILE's functions: against Kafka the runner role only; embedded a whole node.\n${settingsHelp()}`,
  keys: () => `usage: sluice keys create --env ENV | list | revoke KEY_ID\n${CONTROL_NOTE}`,
  tokens: () => `usage: sluice tokens create NAME --role viewer|editor|admin [--env ENV,…] [--expires-in-days N]
       | list | remove TOKEN_ID
  create prints the token once (Authorization: Bearer <token>); --env narrows it to those environments;
  list never shows a token; remove refuses it at once (docs/teams.md).\n${CONTROL_NOTE}`,
  users: () => `usage: sluice users add EMAIL --role viewer|editor|admin [--env ENV,…] [--password-file FILE]
       | list | remove USER_ID
  add sets the password read from FILE (at least 12 characters), or makes one and prints it once; the
  user signs in to the dashboard with it; remove ends their sessions at once (docs/teams.md).\n${CONTROL_NOTE}`,
  audit: () => `usage: sluice audit [--since MS] [--limit N] [--env ENV]
  The audit log: every change through the REST API and every refused one (docs/teams.md).\n${CONTROL_NOTE}`,
  backup: () => `usage: sluice backup --to DIR
  A running embedded server copies one point in time of its whole data dir into DIR (a path on the
  server's disk that does not exist yet; relative to this shell's directory), while it goes on serving.
  Restore it with sluice restore (docs/operations.md, "Backups and upgrades").\n${CONTROL_NOTE}`,
  restore: () => `usage: sluice restore --from DIR --data-dir DATA_DIR
  Puts the backup in DIR into DATA_DIR, which must hold no database (stop the server and move its data
  dir away, or name a new one), and checks it opens; then start the server on DATA_DIR.`,
  apps: () => `usage: sluice apps sync URL | list | remove APP_ID   [--env ENV]
  sync calls the app's serve() URL, signed, and registers its functions; list shows each app's SDK and
  last sync; remove forgets the app and its functions (docs/inngest-sdk.md).\n${CONTROL_NOTE}`,
  envs: () => `usage: sluice envs create NAME [--branch] [--schema-mode off|warn|block] [--unknown-names allow|warn|block]
                              [--max-body-bytes N] [--max-events-per-second N]
                   | list | archive NAME
                   | set NAME [--schema-mode off|warn|block] [--unknown-names allow|warn|block]
                              [--max-body-bytes N] [--max-events-per-second N]
  set branch: the branch group's modes, used by every branch environment until it sets its own.\n${CONTROL_NOTE}`,
  schemas: () => `usage: sluice schemas push NAME FILE | pull NAME | list   [--env ENV]
                       | draft NAME [--limit N (default 1000)] [--since TIME] [--out FILE]   [--env ENV]
  A JSON Schema (draft 2020-12) for the data of events named NAME, per environment (default production;
  "branch" for every branch environment). push stores a new version if it keeps accepting what the latest
  accepted (docs/schemas.md); pull prints the latest schema; list the names with schemas; draft proposes
  one from the name's latest stored events (stdout or FILE) and shows its diff to the latest on stderr.
${CONTROL_NOTE}`,
  send: () => `usage: sluice send JSON [--key EVENT_KEY] [--env BRANCH]   (key also from SERVICE_EVENT_KEY)
${CONTROL_NOTE}`,
  webhooks: () => `usage: sluice ${WEBHOOKS_USAGE.trimStart()}\n${CONTROL_NOTE}`,
  alerts: () => `usage: sluice ${ALERTS_USAGE.trimStart()}\n${CONTROL_NOTE}`,
  functions:
    () => `usage: sluice functions list | pause KEY | resume KEY [--skip-held]   [--env ENV (default production)]
  pause holds the function's new runs (durably) until resume runs them in order; --skip-held skips them instead.
${CONTROL_NOTE}`,
  types: () => `${TYPES_USAGE}\n${CONTROL_NOTE}`,
  runs: () => `usage: sluice runs bulk cancel|replay [--function KEY] [--env ENV] [--status STATUS] [--event NAME]
                         [--after TIME] [--before TIME] [--mode new|retry] [--dry-run]
       sluice runs bulk status [JOB_ID]
  Cancels or replays every run the filter matches (TIME: ms or ISO 8601, on when the run was queued), as a
  background job; --dry-run counts them and changes nothing. Replay starts new runs of the same events
  (--mode new, the default) or retries failed runs from their last completed step (--mode retry).
${CONTROL_NOTE}`,
}

function settingsHelp(): string {
  const groups = SETTING_GROUPS.map(({ title, settings }) => {
    const rows = Object.entries(settings).map(([name, setting]) => settingHelp(name as SettingName, setting))
    return `${title}:\n${rows.join('\n')}`
  })
  const heading =
    "Settings (flag, variable, default, range; a list's flag may be repeated; docs/configuration.md says more)"
  return `${heading}:\n${groups.join('\n')}`
}

/** `  --flag  SLUICE_X (default …)  range`, and under it the setting's doc line. */
function settingHelp(name: SettingName, setting: Setting): string {
  const fallback = shownDefault(setting) && ` (default ${shownDefault(setting)})`
  const file = setting.secret ? `, or --${flagOf(name)}-file / ${setting.env}_FILE` : ''
  const range = rangeOf(setting) && `  ${rangeOf(setting)}`
  return `  --${flagOf(name)}  ${setting.env}${fallback}${file}${range}\n      ${setting.doc}`
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command !== undefined && COMMAND_USAGE[command] && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(COMMAND_USAGE[command]() + '\n')
    return 0
  }
  if (command === 'dev' || command === 'start' || command === 'runner') {
    // Only the server commands load the server (RocksDB, fastify, the stages): control commands start at once.
    const [{ serverConfig }, { serve }] = await Promise.all([
      import('../config/server-config.ts'),
      import('../server/serve.ts'),
    ])
    await serve(command, serverConfig(command, rest))
    return -1 // keeps running
  }
  if (command === 'restore') return restoreCommand(rest)
  if (
    ['backup', 'keys', 'envs', 'tokens', 'users', 'audit', 'apps', 'send', 'functions', 'runs', 'schemas'].includes(
      command,
    )
  )
    return controlCommand(command, rest)
  if (command === 'webhooks') return webhooksCommand(rest)
  if (command === 'alerts') return alertsCommand(rest)
  // Loaded on use: its generator pulls in prettier.
  if (command === 'types') return (await import('./types.ts')).typesCommand(rest)
  process.stderr.write(USAGE + '\n')
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2
}

/** Offline: loads RocksDB, not the server. */
async function restoreCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { from: { type: 'string' }, 'data-dir': { type: 'string' } } })
  if (!values.from || !values['data-dir']) {
    process.stderr.write(`${COMMAND_USAGE.restore()}\n`)
    return 2
  }
  const [{ restoreBackup, RestoreError }, { serverConfig }, { rocksOptionsOf }] = await Promise.all([
    import('../server/backup.ts'),
    import('../config/server-config.ts'),
    import('../config/config.ts'),
  ])
  const dataDir = values['data-dir']
  try {
    const config = serverConfig('dev', ['--data-dir', dataDir])
    const manifest = await restoreBackup(values.from, dataDir, rocksOptionsOf(config))
    process.stdout.write(`${JSON.stringify({ restored: values.from, data_dir: dataDir, ...manifest }, null, 2)}\n`)
    return 0
  } catch (err) {
    if (!(err instanceof RestoreError) && !(err instanceof Error && 'code' in err)) throw err
    process.stderr.write(`sluice restore: ${(err as Error).message}\n`)
    return 1
  }
}
