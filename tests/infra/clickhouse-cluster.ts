// A replicated, sharded ClickHouse cluster on loopback ports, for the store's cluster layout
// (docs/clickhouse.md, "On a cluster"): one ZooKeeper (its jars from Maven Central, fetched by
// provision.sh) and three of Debian's clickhouse-server 18.16, which no Docker is needed for.
// Each server has the macros of its place, and remote_servers names two clusters over them:
//   replicated  one shard of two replicas:           [a, b]
//   sharded     two shards, the first replicated:    [a, b] [c]
// A test file starts its own and stops it: the shared services stay untouched.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { clickHouseCommand, configXml, isClickHouseReachable, usersXml } from './clickhouse.ts'
import { freePorts } from './ports.ts'
import { pollUntil } from './poll.ts'
import { killGroupsOnExit, logTail, spawnService, stopGroup, type ServiceProcess } from './process-group.ts'

/** Kept in step with zookeeper_version in provision.sh and tests/infra/zookeeper/pom.xml. */
export const ZOOKEEPER_VERSION = '3.9.5'
const zookeeperLibs = fileURLToPath(new URL(`./.cache/zookeeper-${ZOOKEEPER_VERSION}/libs`, import.meta.url))

export const CLUSTERS = { replicated: 'replicated', sharded: 'sharded' } as const

export interface ClusterServer {
  /** Its replica macro: a, b or c. */
  name: string
  url: string
  tcpPort: number
  shard: string
}

export interface ClickHouseCluster {
  servers: ClusterServer[]
  /** kill -9, as a crash; the data dir stays for restart(). */
  kill(index: number): Promise<void>
  /** Starts a killed server again on its data dir and ports; resolves once it answers. */
  restart(index: number): Promise<void>
  stop(): Promise<void>
}

interface Place {
  name: string
  shard: string
  http: number
  tcp: number
  interserver: number
  dir: string
}

// Small heap, serial GC and C1 only, as for Kafka (kafka.ts): gentle on a 2-core machine.
const JVM_ARGS = ['-Xms32m', '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:-UsePerfData']

export async function startClickHouseCluster(options: { startTimeoutMs?: number } = {}): Promise<ClickHouseCluster> {
  if (!existsSync(zookeeperLibs)) {
    throw new Error(`ZooKeeper jars missing in ${zookeeperLibs}: run \`bash tests/infra/provision.sh\` first`)
  }
  const timeoutMs = options.startTimeoutMs ?? 90_000
  const root = await mkdtemp(join(tmpdir(), 'sluice-ch-cluster-'))
  const ports = await freePorts(10)
  const zkPort = ports[9]
  const places: Place[] = ['a', 'b', 'c'].map((name, i) => ({
    name,
    shard: name === 'c' ? '02' : '01',
    http: ports[i * 3],
    tcp: ports[i * 3 + 1],
    interserver: ports[i * 3 + 2],
    dir: join(root, name),
  }))
  const running = new Map<string, ServiceProcess>()
  const pids = () => [...running.values()].map((p) => p.pid)
  const unregister = killGroupsOnExit(pids, root)
  const stop = async () => {
    await Promise.all(pids().map((pid) => stopGroup(pid, 'SIGKILL')))
    running.clear()
    unregister()
    await rm(root, { recursive: true, force: true })
  }

  try {
    await startZooKeeper(join(root, 'zookeeper'), zkPort, running, timeoutMs)
    for (const place of places) {
      for (const sub of ['data', 'tmp', 'user_files', 'format_schemas'])
        await mkdir(join(place.dir, sub), { recursive: true })
      const extra = clusterXml(places, place, zkPort)
      await writeFile(
        join(place.dir, 'config.xml'),
        configXml(place.dir, place.http, place.tcp, place.interserver, undefined, extra),
      )
      await writeFile(join(place.dir, 'users.xml'), usersXml([]))
    }
    await Promise.all(places.map((place) => startServer(place, running, timeoutMs)))
  } catch (error) {
    await stop()
    throw error
  }
  return {
    servers: places.map((p) => ({ name: p.name, url: urlOf(p), tcpPort: p.tcp, shard: p.shard })),
    async kill(index) {
      const proc = running.get(places[index].name)
      if (!proc) return
      await stopGroup(proc.pid, 'SIGKILL')
      running.delete(places[index].name)
    },
    restart: (index) => startServer(places[index], running, timeoutMs),
    stop,
  }
}

const urlOf = (place: Place) => `http://127.0.0.1:${place.http}`

async function startServer(place: Place, running: Map<string, ServiceProcess>, timeoutMs: number): Promise<void> {
  const [command, ...args] = clickHouseCommand()
  const proc = spawnService(
    command,
    [...args, `--config-file=${join(place.dir, 'config.xml')}`],
    join(place.dir, 'stdout.log'),
    place.dir,
  )
  running.set(place.name, proc)
  await pollUntil(() => isClickHouseReachable(urlOf(place)), {
    what: `ClickHouse ${place.name} on ${urlOf(place)}`,
    timeoutMs,
    abortIf: () =>
      proc.exited() ? `exited during startup:\n${logTail(join(place.dir, 'server.err.log'))}` : undefined,
  })
}

async function startZooKeeper(dir: string, port: number, running: Map<string, ServiceProcess>, timeoutMs: number) {
  await mkdir(join(dir, 'data'), { recursive: true })
  // A short tick bounds the session timeout (2 to 20 ticks): a killed replica's session, and so its
  // "active" mark, ends within seconds, as the tests of a replica's death need.
  const cfg = [
    'tickTime=500',
    `dataDir=${join(dir, 'data')}`,
    `clientPort=${port}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    '4lw.commands.whitelist=srvr',
    'maxClientCnxns=0',
  ]
  await writeFile(join(dir, 'zoo.cfg'), cfg.join('\n') + '\n')
  const args = [
    ...JVM_ARGS,
    '-cp',
    `${zookeeperLibs}/*`,
    'org.apache.zookeeper.server.quorum.QuorumPeerMain',
    join(dir, 'zoo.cfg'),
  ]
  const proc = spawnService('java', args, join(dir, 'zookeeper.log'), dir)
  running.set('zookeeper', proc)
  await pollUntil(() => serving(port), {
    what: `ZooKeeper on 127.0.0.1:${port}`,
    timeoutMs,
    abortIf: () => (proc.exited() ? `exited during startup:\n${logTail(proc.logFile)}` : undefined),
  })
}

/** ZooKeeper's four-letter `srvr` names the server's mode once it serves clients (`ruok` answers before). */
function serving(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.setTimeout(2000, () => socket.destroy())
    socket.on('connect', () => socket.write('srvr'))
    socket.on('data', (chunk) => (answer += chunk.toString()))
    socket.on('close', () => resolve(answer.includes('Mode: ')))
    socket.on('error', () => resolve(false))
  })
}

function clusterXml(places: Place[], self: Place, zkPort: number): string {
  const replica = (p: Place) => `<replica><host>127.0.0.1</host><port>${p.tcp}</port></replica>`
  // internal_replication: the Distributed table writes one replica per shard and replication copies it.
  const shard = (members: Place[]) =>
    `<shard><internal_replication>true</internal_replication>${members.map(replica).join('')}</shard>`
  const [a, b, c] = places
  return `
  <zookeeper>
    <node><host>127.0.0.1</host><port>${zkPort}</port></node>
    <session_timeout_ms>5000</session_timeout_ms>
  </zookeeper>
  <remote_servers>
    <${CLUSTERS.replicated}>${shard([a, b])}</${CLUSTERS.replicated}>
    <${CLUSTERS.sharded}>${shard([a, b])}${shard([c])}</${CLUSTERS.sharded}>
  </remote_servers>
  <macros><shard>${self.shard}</shard><replica>${self.name}</replica></macros>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>`
}
