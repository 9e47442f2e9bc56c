import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Kafka, logLevel } from 'kafkajs'
import { probeMetadata } from './kafka-probe.ts'
import { freePorts } from './ports.ts'
import { pollUntil } from './poll.ts'
import { killGroupsOnExit, logTail, spawnService, stopGroup, type ServiceProcess } from './process-group.ts'
import type { FaultProxy, ToxiproxyServer } from './toxiproxy.ts'

/** Kept in step with tests/infra/kafka/pom.xml and provision.sh. */
export const KAFKA_VERSION = '3.9.2'
export const kafkaLibsDir = fileURLToPath(new URL(`./.cache/kafka-${KAFKA_VERSION}/libs`, import.meta.url))

export type KafkaCluster = {
  /** 'host:port' of each broker, in node order; stays valid across stopBroker/startBroker. Behind a proxy, its address. */
  brokers: string[]
  /**
   * With `proxy`: by name, every connection to a broker, clients' and replication alike
   * (`broker-<id>`), and each node's to another's controller (`controller-<from>-<to>`).
   */
  proxies: Map<string, FaultProxy>
  /** With `isolatedClients`: each one's bootstrap addresses, its listener's proxies (`<name>-broker-<id>`). */
  isolatedBrokers: Map<string, string[]>
  /** Temp dir holding every node's config, data and log; removed by stop(). */
  dir: string
  /** Process-group leaders of the brokers now running. */
  pids: () => number[]
  stopBroker: (index: number, options?: { signal?: 'SIGTERM' | 'SIGKILL' }) => Promise<void>
  startBroker: (index: number) => Promise<void>
  /**
   * Resolves once every running broker reports `topic` with `partitions` led
   * partitions. Brokers learn of a new topic at different moments, and kafkajs's
   * createTopics({ waitForLeaders: true }) rejects with
   * UNKNOWN_TOPIC_OR_PARTITION when it asks one that has not; create with
   * waitForLeaders: false, then call this.
   */
  waitForTopic: (topic: string, partitions: number) => Promise<void>
  stop: () => Promise<void>
}

export type StartKafkaOptions = {
  brokers: 1 | 3
  /**
   * Clients get only a SASL_SSL listener with SCRAM-SHA-512 users (created by StorageTool format);
   * the first user is also the brokers' own. PEM files: `keyAndCertPem` the brokers' private key
   * (PKCS#8, unencrypted) followed by their certificate, `caPem` the CA that signed it.
   */
  saslSsl?: SaslSslOptions
  /** up.ts sets this: the brokers must outlive the process that started them. */
  keepAfterExit?: boolean
  startTimeoutMs?: number
  /**
   * Every connection to a broker goes through this Toxiproxy (the brokers advertise the proxies'
   * addresses), and so does each node's to every other controller, so that a fault can slow or
   * cut one broker off from clients and from the quorum alike. Plaintext only.
   */
  proxy?: ToxiproxyServer
  /**
   * With `proxy`: clients that reach the brokers on a listener of their own, through proxies of their
   * own, so that a fault can cut one process off from Kafka while every other one stays connected.
   */
  isolatedClients?: string[]
}

export type SaslSslOptions = { keyAndCertPem: string; caPem: string; users: { name: string; password: string }[] }

type KafkaNode = {
  nodeId: number
  port: number
  controllerPort: number
  dir: string
  /** Where others reach it: itself, or its proxy. */
  advertised: string
  /** Where this node reaches each voter's controller, by node id. */
  voters: Map<number, string>
  /** The isolated clients' listeners: name, port, advertised (proxy) address. */
  isolated: Array<{ name: string; port: number; advertised: string }>
}

// Gentle on a 2-core machine: small heap, one GC thread, and C1 only, which
// roughly halves JIT CPU during the startup burst; broker throughput is ample for tests.
const JVM_ARGS = [
  '-Xms64m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:-UsePerfData',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
]

export async function startKafka(options: StartKafkaOptions): Promise<KafkaCluster> {
  if (!existsSync(kafkaLibsDir)) {
    throw new Error(`Kafka jars missing in ${kafkaLibsDir}: run \`bash tests/infra/provision.sh\` first`)
  }
  const count = options.brokers
  const timeoutMs = options.startTimeoutMs ?? 120_000
  const root = await mkdtemp(join(tmpdir(), 'sluice-kafka-'))
  const isolatedNames = options.proxy ? (options.isolatedClients ?? []) : []
  const ports = await freePorts(count * (2 + isolatedNames.length))
  const extra = ports.slice(count * 2)
  const nodes: KafkaNode[] = Array.from({ length: count }, (_, i) => ({
    nodeId: i + 1,
    port: ports[i * 2],
    controllerPort: ports[i * 2 + 1],
    dir: join(root, `node-${i + 1}`),
    advertised: `127.0.0.1:${ports[i * 2]}`,
    voters: new Map(Array.from({ length: count }, (_, j) => [j + 1, `127.0.0.1:${ports[j * 2 + 1]}`])),
    isolated: isolatedNames.map((name, k) => ({ name, port: extra[i * isolatedNames.length + k], advertised: '' })),
  }))
  const proxies = new Map<string, FaultProxy>()
  if (options.proxy) {
    if (options.saslSsl) throw new Error('startKafka: proxy is for plaintext clusters')
    for (const node of nodes) {
      const broker = await options.proxy.proxy(`broker-${node.nodeId}`, `127.0.0.1:${node.port}`)
      proxies.set(`broker-${node.nodeId}`, broker)
      node.advertised = broker.listen
      for (const listener of node.isolated) {
        const name = `${listener.name}-broker-${node.nodeId}`
        const own = await options.proxy.proxy(name, `127.0.0.1:${listener.port}`)
        proxies.set(name, own)
        listener.advertised = own.listen
      }
      for (const to of nodes.filter((n) => n !== node)) {
        const name = `controller-${node.nodeId}-${to.nodeId}`
        const controller = await options.proxy.proxy(name, `127.0.0.1:${to.controllerPort}`)
        proxies.set(name, controller)
        node.voters.set(to.nodeId, controller.listen)
      }
    }
  }
  const running = new Map<number, ServiceProcess>()
  const pids = () => [...running.values()].map((p) => p.pid)
  const unregister = options.keepAfterExit ? () => {} : killGroupsOnExit(pids, root)

  const stop = async () => {
    // No graceful shutdown: the data is thrown away, and a KRaft node that lost
    // its quorum can hang in controlled shutdown.
    await Promise.all(pids().map((pid) => stopGroup(pid, 'SIGKILL')))
    running.clear()
    unregister()
    await rm(root, { recursive: true, force: true })
  }

  const spawnBroker = (index: number) => {
    const node = nodes[index]
    const proc = spawnService(
      'java',
      [
        ...JVM_ARGS,
        `-Dlog4j.configuration=file:${join(root, 'log4j.properties')}`,
        '-cp',
        `${kafkaLibsDir}/*`,
        'kafka.Kafka',
        join(node.dir, 'server.properties'),
      ],
      join(node.dir, 'broker.log'),
      node.dir,
    )
    running.set(index, proc)
  }

  // Each broker applies the metadata log on its own schedule, and clients ask a
  // random one, so "ready" means every running broker lists exactly the running
  // set: joined after a start, fenced after a kill. Until a killed broker is
  // fenced, metadata still names it as leader and "controller", and kafkajs's
  // idempotent producer fails to connect instead of retrying.
  const waitForMembership = async (what: string) => {
    const expected = nodes.filter((_, i) => running.has(i)).map((n) => n.nodeId)
    const live = nodes.filter((_, i) => running.has(i))
    const idsOf = options.saslSsl ? (node: KafkaNode) => secureClusterNodeIds(node, options.saslSsl!) : clusterNodeIds
    await pollUntil(async () => (await Promise.all(live.map(idsOf))).every((ids) => sameIds(ids, expected)), {
      what,
      timeoutMs,
      abortIf: () => {
        const dead = [...running.values()].find((proc) => proc.exited())
        return dead === undefined
          ? undefined
          : `a broker exited; log tail of ${dead.logFile}:\n${logTail(dead.logFile)}`
      },
    })
  }

  const startBroker = async (index: number) => {
    if (nodes[index] === undefined) throw new Error(`no broker ${index}; the cluster has ${count}`)
    if (running.has(index)) return
    spawnBroker(index)
    await waitForMembership(`Kafka broker ${nodes[index].nodeId} joining on 127.0.0.1:${nodes[index].port}`)
  }

  const stopBroker = async (index: number, stopOptions: { signal?: 'SIGTERM' | 'SIGKILL' } = {}) => {
    const proc = running.get(index)
    if (proc === undefined) return
    await stopGroup(proc.pid, stopOptions.signal ?? 'SIGTERM')
    running.delete(index)
    // Without a majority of voters left nothing can be fenced: return at once.
    if (running.size > count / 2) await waitForMembership(`fencing of Kafka broker ${nodes[index].nodeId}`)
  }

  const waitForTopic = async (topic: string, partitions: number) => {
    const live = nodes.filter((_, i) => running.has(i))
    await pollUntil(
      async () => (await Promise.all(live.map((node) => brokerHasTopic(node, topic, partitions)))).every(Boolean),
      {
        what: `topic ${topic} on every broker`,
        timeoutMs,
      },
    )
  }

  try {
    await writeFile(join(root, 'log4j.properties'), LOG4J_PROPERTIES)
    const clusterId = randomClusterId()
    await Promise.all(nodes.map((node) => formatNode(node, nodes, clusterId, options.saslSsl)))
    // All nodes start together: a 3-voter quorum cannot elect a leader until two are up.
    nodes.forEach((_, i) => spawnBroker(i))
    await waitForMembership(`Kafka cluster of ${count} on ${nodes.map((n) => n.port).join(',')}`)
  } catch (error) {
    await stop()
    throw error
  }
  return {
    brokers: nodes.map((n) => n.advertised),
    proxies,
    isolatedBrokers: new Map(isolatedNames.map((name, k) => [name, nodes.map((n) => n.isolated[k].advertised)])),
    dir: root,
    pids,
    stopBroker,
    startBroker,
    waitForTopic,
    stop,
  }
}

/** True when brokers answer metadata requests; used by up.ts to reuse a running cluster. */
export async function isKafkaReachable(brokers: string[]): Promise<boolean> {
  const admin = new Kafka({
    clientId: 'sluice-test-infra',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  }).admin()
  try {
    await admin.connect()
    await admin.listTopics()
    return true
  } catch {
    return false
  } finally {
    await admin.disconnect().catch(() => {})
  }
}

function sameIds(actual: number[], expected: number[]): boolean {
  return actual.length === expected.length && expected.every((id) => actual.includes(id))
}

/** The unfenced brokers as `node` sees them, asking it alone. */
async function clusterNodeIds(node: KafkaNode): Promise<number[]> {
  return (await probeMetadata('127.0.0.1', node.port)).brokerIds
}

/** probeMetadata speaks plaintext only: a SASL_SSL broker is asked through kafkajs (one broker, one node). */
async function secureClusterNodeIds(node: KafkaNode, saslSsl: SaslSslOptions): Promise<number[]> {
  const [user] = saslSsl.users
  const admin = new Kafka({
    clientId: 'sluice-test-infra',
    brokers: [`127.0.0.1:${node.port}`],
    ssl: { ca: [await readFile(saslSsl.caPem, 'utf8')] },
    sasl: { mechanism: 'scram-sha-512', username: user.name, password: user.password },
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 0 },
  }).admin()
  try {
    await admin.connect()
    return (await admin.describeCluster()).brokers.map((b) => b.nodeId)
  } catch {
    return []
  } finally {
    await admin.disconnect().catch(() => {})
  }
}

async function brokerHasTopic(node: KafkaNode, topic: string, partitions: number): Promise<boolean> {
  const [metadata] = (await probeMetadata('127.0.0.1', node.port, [topic])).topics
  return (
    metadata?.errorCode === 0 &&
    metadata.partitions.length === partitions &&
    metadata.partitions.every((p) => p.leader >= 0)
  )
}

async function formatNode(
  node: KafkaNode,
  nodes: KafkaNode[],
  clusterId: string,
  saslSsl: SaslSslOptions | undefined,
): Promise<void> {
  await mkdir(join(node.dir, 'data'), { recursive: true })
  const properties = join(node.dir, 'server.properties')
  await writeFile(properties, serverProperties(node, nodes, saslSsl))
  // SCRAM credentials live in the metadata log: written at format time, before the first start.
  const scram = (saslSsl?.users ?? []).flatMap((u) => [
    '--add-scram',
    `SCRAM-SHA-512=[name=${u.name},password=${u.password}]`,
  ])
  await promisify(execFile)(
    'java',
    [
      '-Xmx256m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Dlog4j.configuration=file:${join(node.dir, '..', 'log4j.properties')}`,
      '-cp',
      `${kafkaLibsDir}/*`,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      properties,
      '--ignore-formatted',
      ...scram,
    ],
    { cwd: node.dir },
  )
}

/** Only a SASL_SSL listener for clients and between brokers; the controller listener stays internal. */
function saslSslProperties(node: KafkaNode, saslSsl: SaslSslOptions): Record<string, string | number | boolean> {
  const [self] = saslSsl.users
  return {
    listeners: `SASL_SSL://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    'advertised.listeners': `SASL_SSL://127.0.0.1:${node.port}`,
    'inter.broker.listener.name': 'SASL_SSL',
    'listener.security.protocol.map': 'SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
    'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="${self.name}" password="${self.password}";`,
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': saslSsl.keyAndCertPem,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': saslSsl.caPem,
  }
}

function serverProperties(node: KafkaNode, nodes: KafkaNode[], saslSsl?: SaslSslOptions): string {
  const replication = nodes.length
  const minInsync = Math.min(2, replication)
  const settings: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': node.nodeId,
    'controller.quorum.voters': [...node.voters].map(([id, address]) => `${id}@${address}`).join(','),
    listeners: [
      `PLAINTEXT://127.0.0.1:${node.port}`,
      `CONTROLLER://127.0.0.1:${node.controllerPort}`,
      ...node.isolated.map((l) => `${listenerName(l.name)}://127.0.0.1:${l.port}`),
    ].join(','),
    'advertised.listeners': [
      `PLAINTEXT://${node.advertised}`,
      ...node.isolated.map((l) => `${listenerName(l.name)}://${l.advertised}`),
    ].join(','),
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': [
      'PLAINTEXT:PLAINTEXT',
      'CONTROLLER:PLAINTEXT',
      ...node.isolated.map((l) => `${listenerName(l.name)}:PLAINTEXT`),
    ].join(','),
    'log.dirs': join(node.dir, 'data'),
    // Tests create their topics explicitly, as production does.
    'auto.create.topics.enable': false,
    'num.partitions': 1,
    'default.replication.factor': replication,
    'min.insync.replicas': minInsync,
    'offsets.topic.replication.factor': replication,
    // 50 partitions (the default) make the first consumer group wait on 50 leader elections.
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': replication,
    'transaction.state.log.min.isr': minInsync,
    'transaction.state.log.num.partitions': 10,
    // Consumer groups in tests form at once and may use short session timeouts.
    'group.initial.rebalance.delay.ms': 0,
    'group.min.session.timeout.ms': 1000,
    'num.network.threads': 2,
    'num.io.threads': 4,
    'log.cleaner.dedupe.buffer.size': 8 * 1024 * 1024,
    // Fence a killed broker in ~6 s instead of 9 (stopBroker waits for it), still
    // leaving room for heartbeats delayed while 3 JVMs start on 2 cores.
    'broker.session.timeout.ms': 6000,
    'broker.heartbeat.interval.ms': 1000,
    ...(saslSsl && saslSslProperties(node, saslSsl)),
  }
  return (
    Object.entries(settings)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n') + '\n'
  )
}

/** A listener's name for an isolated client: Kafka's are upper case letters, digits and underscores. */
const listenerName = (client: string) => `CLIENT_${client.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`

/** Kafka's Uuid format: 16 random bytes, base64url; one starting with '-' would read as a CLI flag. */
function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

const LOG4J_PROPERTIES = `log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
`
