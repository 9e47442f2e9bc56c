// A current ClickHouse (26.9) beside Debian's 18.16, so the store and the analysts' queries
// are proven on both. No current clickhouse package is reachable on these machines; PyPI's
// chdb-core wheel holds the whole clickhouse-local program (provision.sh installs it in a
// virtualenv), and from 26.6 clickhouse-local can start the HTTP listener that the store's
// client speaks to. One endless query keeps it listening; killing the process stops it.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ClickHouseServer, isClickHouseReachable, type StartClickHouseOptions } from './clickhouse.ts'
import { freePort } from './ports.ts'
import { pollUntil } from './poll.ts'
import { killGroupsOnExit, logTail, spawnService, stopGroup } from './process-group.ts'

/** Kept in step with chdb_core_version in provision.sh. */
export const CHDB_CORE_VERSION = '26.9.0'

const venvPython = fileURLToPath(new URL(`./.cache/chdb-core-${CHDB_CORE_VERSION}/bin/python`, import.meta.url))

/** What identifies the server's process (its interpreter's path), so a recycled pid is never killed. */
export const CURRENT_COMMAND_MARK = `chdb-core-${CHDB_CORE_VERSION}`

/** The same shape as Debian's server (clickhouse.ts); the current release takes no extra users. */
export type StartCurrentClickHouseOptions = Omit<StartClickHouseOptions, 'users'>

// `SYSTEM START LISTEN HTTP` opens the listener of config.xml (read from the working
// directory); the query after it never ends (one row a second for ~30,000 years), which is
// what keeps clickhouse-local, and so the listener, up. chdb allows one such call a process.
const SERVE_PY = `import sys
import chdb._chdb as chdb
chdb.query(
    "SYSTEM START LISTEN HTTP; "
    "SELECT sleepEachRow(1) FROM numbers(1000000000000) SETTINGS max_block_size = 1 FORMAT Null",
    "CSV",
    path=sys.argv[1],
)
`

export async function startCurrentClickHouse(options: StartCurrentClickHouseOptions = {}): Promise<ClickHouseServer> {
  if (!existsSync(venvPython)) {
    throw new Error(`ClickHouse ${CHDB_CORE_VERSION} (chdb-core) not found: run \`bash tests/infra/provision.sh\``)
  }
  const dir = await mkdtemp(join(tmpdir(), 'sluice-clickhouse-current-'))
  const httpPort = await freePort()
  await mkdir(join(dir, 'data'))
  await writeFile(join(dir, 'config.xml'), configXml(httpPort))
  await writeFile(join(dir, 'serve.py'), SERVE_PY)

  const proc = spawnService(venvPython, [join(dir, 'serve.py'), join(dir, 'data')], join(dir, 'stdout.log'), dir)
  const unregister = options.keepAfterExit ? () => {} : killGroupsOnExit(() => [proc.pid], dir)
  const url = `http://127.0.0.1:${httpPort}`
  const stop = async () => {
    await stopGroup(proc.pid, 'SIGKILL')
    unregister()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await pollUntil(() => isClickHouseReachable(url), {
      what: `ClickHouse ${CHDB_CORE_VERSION} on ${url}`,
      timeoutMs: options.startTimeoutMs ?? 60_000,
      abortIf: () => (proc.exited() ? `exited during startup; log tail:\n${logTail(proc.logFile)}` : undefined),
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { url, pid: proc.pid, dir, stop }
}

// Loopback only: the default user has no password. UTC like the 18.16 server, so both
// answer the docs' time queries alike.
function configXml(httpPort: number): string {
  return `<?xml version="1.0"?>
<clickhouse>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <timezone>UTC</timezone>
</clickhouse>
`
}
