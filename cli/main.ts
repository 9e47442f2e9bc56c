// The `sluice` command.
import { parseArgs } from 'node:util'
import { loadConfig, type Config, type Flags } from './config.ts'
import { createLogger } from './log.ts'
import { controlCommand } from './control.ts'
import { checkRunnerConfig, runnerConfig } from './runner.ts'
import { webhooksCommand, WEBHOOKS_USAGE } from './webhooks.ts'

const SERVER_OPTIONS = {
  port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' }, 'signing-key': { type: 'string' },
  'log-level': { type: 'string' }, 'trust-proxy': { type: 'string' }, role: { type: 'string', multiple: true },
  functions: { type: 'string' }, watch: { type: 'boolean' }, partitions: { type: 'string' },
  'request-timeout-ms': { type: 'string' }, 'headers-timeout-ms': { type: 'string' }, 'keep-alive-timeout-ms': { type: 'string' },
  'socket-idle-timeout-ms': { type: 'string' }, 'max-connections': { type: 'string' }, 'allowed-hosts': { type: 'string' },
} as const

const USAGE = `usage: sluice <command>
  dev     [--port 8288] [--host 127.0.0.1] [--data-dir .sluice] [--functions FILE] [--watch]
  start   [--role ROLE…] [--port …] [--data-dir …] [--signing-key …]   (embedded unless SLUICE_KAFKA_BROKERS is set)
  runner  --functions FILE [--watch] [--port …] [--data-dir …] [--signing-key …]   (serves FILE's functions)
  keys    create --env ENV | list | revoke KEY_ID
  envs    create NAME [--branch] [--max-body-bytes N] [--max-events-per-second N] | list | archive NAME
  send    JSON [--key EVENT_KEY] [--env BRANCH]
${WEBHOOKS_USAGE}
Control commands talk to a running server: --url (SLUICE_URL, default http://127.0.0.1:8288), --signing-key (SLUICE_SIGNING_KEY).`

/** The configuration `sluice dev|start|runner <args>` runs with (also what the Helm chart's test checks its Deployments against). */
export function serverConfig(command: 'dev' | 'start' | 'runner', args: string[], env?: NodeJS.ProcessEnv): Config {
  const { values } = parseArgs({ args, options: SERVER_OPTIONS, strict: true })
  const flags: Flags = {
    port: values.port, host: values.host, dataDir: values['data-dir'], signingKey: values['signing-key'], logLevel: values['log-level'],
    trustProxy: values['trust-proxy'], roles: values.role?.join(','), functionsFile: values.functions, watch: values.watch, partitions: values.partitions,
    requestTimeoutMs: values['request-timeout-ms'], headersTimeoutMs: values['headers-timeout-ms'],
    keepAliveTimeoutMs: values['keep-alive-timeout-ms'], socketIdleTimeoutMs: values['socket-idle-timeout-ms'],
    maxConnections: values['max-connections'], allowedHosts: values['allowed-hosts'],
  }
  const config = loadConfig(command === 'runner' ? 'start' : command, flags, env)
  if (command !== 'runner') return config
  checkRunnerConfig(config, false)
  return runnerConfig(config)
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'dev' || command === 'start' || command === 'runner') {
    const config = serverConfig(command, rest)
    const log = createLogger(config.logLevel)
    const { startSluice } = await import('./server.ts')
    const running = await startSluice(config, log)
    if (command === 'dev') process.stdout.write(`\n  Sluice Dev Server: ${running.url}\n  Event API: POST ${running.url}/e/<any key>\n\n`)
    const shutdown = async (signal: string) => {
      log.info({ signal }, 'stopping')
      await running.stop()
      process.exit(0)
    }
    process.once('SIGINT', shutdown)
    process.once('SIGTERM', shutdown)
    return -1 // keeps running
  }
  if (command === 'keys' || command === 'envs' || command === 'send') return controlCommand(command, rest)
  if (command === 'webhooks') return webhooksCommand(rest)
  process.stderr.write(USAGE + '\n')
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2
}
