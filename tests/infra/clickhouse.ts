import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePorts } from './ports.ts'
import { pollUntil } from './poll.ts'
import { killGroupsOnExit, logTail, spawnService, stopGroup } from './process-group.ts'

export type ClickHouseServer = {
  url: string
  /** Only when started with `https`. */
  httpsUrl?: string
  pid: number
  /** Temp dir with config, data and logs; removed by stop(). */
  dir: string
  stop: () => Promise<void>
}

export type StartClickHouseOptions = {
  /** up.ts sets this: the server must outlive the process that started it. */
  keepAfterExit?: boolean
  startTimeoutMs?: number
  /** Users with a password besides `default` (which has none), as a managed ClickHouse has. */
  users?: { name: string; password: string }[]
  /** Serve HTTPS too (its URL is `httpsUrl`), with this PEM certificate and key. */
  https?: { certificateFile: string; privateKeyFile: string }
}

export async function startClickHouse(options: StartClickHouseOptions = {}): Promise<ClickHouseServer> {
  const [command, ...commandArgs] = clickHouseCommand()
  const dir = await mkdtemp(join(tmpdir(), 'sluice-clickhouse-'))
  const [httpPort, tcpPort, interserverPort, httpsPort] = await freePorts(4)
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) await mkdir(join(dir, sub))
  const https = options.https && { port: httpsPort, ...options.https }
  await writeFile(join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort, interserverPort, https))
  await writeFile(join(dir, 'users.xml'), usersXml(options.users ?? []))

  const proc = spawnService(
    command,
    [...commandArgs, `--config-file=${join(dir, 'config.xml')}`],
    join(dir, 'stdout.log'),
    dir,
  )
  const unregister = options.keepAfterExit ? () => {} : killGroupsOnExit(() => [proc.pid], dir)
  const url = `http://127.0.0.1:${httpPort}`
  const stop = async () => {
    await stopGroup(proc.pid, 'SIGKILL')
    unregister()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await pollUntil(() => isClickHouseReachable(url), {
      what: `ClickHouse on ${url}`,
      timeoutMs: options.startTimeoutMs ?? 60_000,
      abortIf: () =>
        proc.exited()
          ? `exited during startup; log tail:\n${logTail(join(dir, 'server.err.log'))}\n${logTail(proc.logFile)}`
          : undefined,
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { url, httpsUrl: https && `https://127.0.0.1:${https.port}`, pid: proc.pid, dir, stop }
}

/** GET /ping answers "Ok." once the HTTP interface serves queries. */
export async function isClickHouseReachable(url: string): Promise<boolean> {
  try {
    const response = await fetch(new URL('/ping', url), { signal: AbortSignal.timeout(2000) })
    return response.ok && (await response.text()).trim() === 'Ok.'
  } catch {
    return false
  }
}

/** Debian's 18.16 ships `clickhouse-server`; current releases one `clickhouse` binary. */
export function clickHouseCommand(): string[] {
  const has = (name: string) => {
    try {
      execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  }
  if (has('clickhouse-server')) return ['clickhouse-server']
  if (has('clickhouse')) return ['clickhouse', 'server']
  throw new Error('clickhouse-server not found: run `bash tests/infra/provision.sh` first')
}

// <yandex> is the root element 18.16 requires; current releases still accept it.
// Caches are cut from the multi-GB defaults: the tests hold kilobytes.
export function configXml(
  dir: string,
  httpPort: number,
  tcpPort: number,
  interserverPort: number,
  https?: { port: number; certificateFile: string; privateKeyFile: string },
  /** More elements of <yandex> (a cluster's remote_servers, zookeeper and macros). */
  extra = '',
): string {
  // The server side of openSSL only: no client verification, no DH parameters file.
  const tls = https
    ? `
  <https_port>${https.port}</https_port>
  <openSSL>
    <server>
      <certificateFile>${https.certificateFile}</certificateFile>
      <privateKeyFile>${https.privateKeyFile}</privateKeyFile>
      <verificationMode>none</verificationMode>
      <loadDefaultCAFile>false</loadDefaultCAFile>
      <cacheSessions>true</cacheSessions>
      <preferServerCiphers>true</preferServerCiphers>
    </server>
  </openSSL>`
    : ''
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>${dir}/server.log</log>
    <errorlog>${dir}/server.err.log</errorlog>
    <size>50M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <interserver_http_port>${interserverPort}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
  <max_concurrent_queries>100</max_concurrent_queries>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>${tls}${extra}
</yandex>
`
}

export function usersXml(users: { name: string; password: string }[]): string {
  const entries = users.map(
    (u) => `    <${u.name}>
      <password>${u.password}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </${u.name}>\n`,
  )
  return USERS_XML.replace('  </users>', `${entries.join('')}  </users>`)
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries>
        <errors>0</errors>
        <result_rows>0</result_rows>
        <read_rows>0</read_rows>
        <execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
`
