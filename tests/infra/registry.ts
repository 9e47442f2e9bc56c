// A real Confluent-compatible schema registry for the Avro tests: Apicurio Registry, whose app
// Maven Central serves as a ready-to-run Quarkus tarball (provision.sh unpacks it into .cache).
// In-memory storage, so a stopped registry forgets everything; its Confluent API is under
// /apis/ccompat/v7. Compatibility is set to BACKWARD, Confluent's default (Apicurio's is NONE),
// so a schema that would break readers is refused as a real deployment refuses it.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePorts } from './ports.ts'
import { pollUntil } from './poll.ts'
import { killGroupsOnExit, logTail, spawnService, stopGroup } from './process-group.ts'

/** Kept in step with apicurio_version in provision.sh. */
export const APICURIO_VERSION = '3.3.3'
export const registryAppDir = fileURLToPath(new URL(`./.cache/apicurio-registry-${APICURIO_VERSION}`, import.meta.url))

/** In the command line (the jar's path), so a recycled pid is never killed. */
export const REGISTRY_COMMAND_MARK = `apicurio-registry-${APICURIO_VERSION}`

/** Apicurio 3 runs on Java 21 or later; the machine's default java may be older. */
const MIN_JAVA = 21
const JVM_DIR = '/usr/lib/jvm'

export type RegistryServer = {
  /** The Confluent-compatible API's base URL, what SLUICE_SCHEMA_REGISTRY_URL takes. */
  url: string
  pid: number
  /** Temp dir holding the log; removed by stop(). */
  dir: string
  stop: () => Promise<void>
}

export type StartRegistryOptions = {
  /** Every request must carry HTTP basic auth as this user (Quarkus' embedded users). */
  basicAuth?: { username: string; password: string }
  /** up.ts sets this: the registry must outlive the process that started it. */
  keepAfterExit?: boolean
  startTimeoutMs?: number
}

// Gentle on a 2-core machine, as Kafka's: small heap, serial GC, C1 only.
const JVM_ARGS = [
  '-Xms64m',
  '-Xmx256m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:-UsePerfData',
  '-XX:+ExitOnOutOfMemoryError',
]

export async function startRegistry(options: StartRegistryOptions = {}): Promise<RegistryServer> {
  const jar = join(registryAppDir, 'quarkus-run.jar')
  if (!existsSync(jar) || !existsSync(join(registryAppDir, '.complete'))) {
    throw new Error(
      `Apicurio Registry ${APICURIO_VERSION} missing in ${registryAppDir}: run \`bash tests/infra/provision.sh\``,
    )
  }
  const java = javaForRegistry()
  const dir = await mkdtemp(join(tmpdir(), 'sluice-registry-'))
  // The management interface (health, metrics) listens on a port of its own, 9000 unless told.
  const [httpPort, managementPort] = await freePorts(2)
  const { basicAuth } = options
  const auth = basicAuth
    ? [
        '-Dquarkus.http.auth.basic=true',
        '-Dapicurio.authn.mechanism.priority=basic',
        '-Dquarkus.security.users.embedded.plain-text=true',
        `-Dquarkus.security.users.embedded.users.${basicAuth.username}=${basicAuth.password}`,
      ]
    : []
  const args = [
    ...JVM_ARGS,
    '-Dquarkus.http.host=127.0.0.1',
    `-Dquarkus.http.port=${httpPort}`,
    '-Dquarkus.management.host=127.0.0.1',
    `-Dquarkus.management.port=${managementPort}`,
    '-Dquarkus.http.access-log.enabled=false',
    '-Dapicurio.rules.global.compatibility=BACKWARD',
    ...auth,
    '-jar',
    jar,
  ]
  const proc = spawnService(java, args, join(dir, 'registry.log'), dir)
  const unregister = options.keepAfterExit ? () => {} : killGroupsOnExit(() => [proc.pid], dir)
  const url = `http://127.0.0.1:${httpPort}/apis/ccompat/v7`
  const stop = async () => {
    await stopGroup(proc.pid, 'SIGKILL')
    unregister()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await pollUntil(() => isRegistryReachable(url, basicAuth), {
      what: `Apicurio Registry ${APICURIO_VERSION} on ${url}`,
      timeoutMs: options.startTimeoutMs ?? 120_000,
      abortIf: () => (proc.exited() ? `exited during startup; log tail:\n${logTail(proc.logFile)}` : undefined),
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { url, pid: proc.pid, dir, stop }
}

/** True when the registry lists its subjects; used by up.ts to reuse a running one. */
export async function isRegistryReachable(
  url: string,
  basicAuth?: { username: string; password: string },
): Promise<boolean> {
  const headers: Record<string, string> = basicAuth
    ? { authorization: `Basic ${Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString('base64')}` }
    : {}
  try {
    const response = await fetch(`${url}/subjects`, { headers, signal: AbortSignal.timeout(2000) })
    await response.body?.cancel()
    return response.ok
  } catch {
    return false
  }
}

/** The newest JDK of at least MIN_JAVA in /usr/lib/jvm (or JAVA_HOME), by the `release` file each JDK has. */
export function javaForRegistry(): string {
  const homes = [
    process.env.JAVA_HOME,
    ...(existsSync(JVM_DIR) ? readdirSync(JVM_DIR).map((name) => join(JVM_DIR, name)) : []),
  ].filter((home): home is string => home !== undefined && existsSync(join(home, 'bin', 'java')))
  const found = homes
    .map((home) => ({ home, major: javaMajor(home) }))
    .filter(({ major }) => major >= MIN_JAVA)
    .sort((a, b) => b.major - a.major)
  if (found.length === 0) {
    throw new Error(
      `Apicurio Registry ${APICURIO_VERSION} needs Java ${MIN_JAVA} or later: none in ${JVM_DIR} or JAVA_HOME ` +
        `(found: ${homes.map((home) => `${home} (${javaMajor(home) || '?'})`).join(', ') || 'none'})`,
    )
  }
  return join(found[0].home, 'bin', 'java')
}

function javaMajor(home: string): number {
  try {
    const version = /^JAVA_VERSION="(\d+)/m.exec(readFileSync(join(home, 'release'), 'utf8'))?.[1]
    return version === undefined ? 0 : Number(version)
  } catch {
    return 0
  }
}
