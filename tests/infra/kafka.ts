import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { freePorts } from './ports.ts';
import { pollUntil } from './poll.ts';
import { killGroupsOnExit, logTail, spawnService, stopGroup, type ServiceProcess } from './process-group.ts';

/** Kept in step with tests/infra/kafka/pom.xml and provision.sh. */
export const KAFKA_VERSION = '3.9.2';
export const kafkaLibsDir = fileURLToPath(new URL(`./.cache/kafka-${KAFKA_VERSION}/libs`, import.meta.url));

export type KafkaCluster = {
  /** 'host:port' of each broker, in node order; stays valid across stopBroker/startBroker. */
  brokers: string[];
  /** Temp dir holding every node's config, data and log; removed by stop(). */
  dir: string;
  /** Process-group leaders of the brokers now running. */
  pids: () => number[];
  stopBroker: (index: number, options?: { signal?: 'SIGTERM' | 'SIGKILL' }) => Promise<void>;
  startBroker: (index: number) => Promise<void>;
  stop: () => Promise<void>;
};

export type StartKafkaOptions = {
  brokers: 1 | 3;
  /** up.ts sets this: the brokers must outlive the process that started them. */
  keepAfterExit?: boolean;
  startTimeoutMs?: number;
};

type KafkaNode = { nodeId: number; port: number; controllerPort: number; dir: string };

// Gentle on a 2-core machine: small heap, one GC thread, and C1 only, which
// roughly halves JIT CPU during the startup burst; broker throughput is ample for tests.
const JVM_ARGS = ['-Xms64m', '-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:-UsePerfData', '-XX:+ExitOnOutOfMemoryError', '-Djava.awt.headless=true'];

export async function startKafka(options: StartKafkaOptions): Promise<KafkaCluster> {
  if (!existsSync(kafkaLibsDir)) {
    throw new Error(`Kafka jars missing in ${kafkaLibsDir}: run \`bash tests/infra/provision.sh\` first`);
  }
  const count = options.brokers;
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const root = await mkdtemp(join(tmpdir(), 'sluice-kafka-'));
  const ports = await freePorts(count * 2);
  const nodes: KafkaNode[] = Array.from({ length: count }, (_, i) => ({
    nodeId: i + 1,
    port: ports[i * 2],
    controllerPort: ports[i * 2 + 1],
    dir: join(root, `node-${i + 1}`),
  }));
  const running = new Map<number, ServiceProcess>();
  const pids = () => [...running.values()].map((p) => p.pid);
  const unregister = options.keepAfterExit ? () => {} : killGroupsOnExit(pids);

  const stop = async () => {
    // No graceful shutdown: the data is thrown away, and a KRaft node that lost
    // its quorum can hang in controlled shutdown.
    await Promise.all(pids().map((pid) => stopGroup(pid, 'SIGKILL')));
    running.clear();
    unregister();
    await rm(root, { recursive: true, force: true });
  };

  const startBroker = async (index: number) => {
    const node = nodes[index];
    if (node === undefined) throw new Error(`no broker ${index}; the cluster has ${count}`);
    if (running.has(index)) return;
    const proc = spawnService('java', [...JVM_ARGS, `-Dlog4j.configuration=file:${join(root, 'log4j.properties')}`, '-cp', `${kafkaLibsDir}/*`, 'kafka.Kafka', join(node.dir, 'server.properties')], join(node.dir, 'broker.log'), node.dir);
    running.set(index, proc);
    await pollUntil(() => brokerSeesCluster(node, running.size), {
      what: `Kafka broker ${node.nodeId} on 127.0.0.1:${node.port}`,
      timeoutMs,
      abortIf: () => (proc.exited() ? `exited during startup; log tail:\n${logTail(proc.logFile)}` : undefined),
    }).catch(async (error: unknown) => {
      await stopGroup(proc.pid, 'SIGKILL');
      running.delete(index);
      throw error;
    });
  };

  const stopBroker = async (index: number, stopOptions: { signal?: 'SIGTERM' | 'SIGKILL' } = {}) => {
    const proc = running.get(index);
    if (proc === undefined) return;
    await stopGroup(proc.pid, stopOptions.signal ?? 'SIGTERM');
    running.delete(index);
  };

  try {
    await writeFile(join(root, 'log4j.properties'), LOG4J_PROPERTIES);
    const clusterId = randomClusterId();
    await Promise.all(nodes.map((node) => formatNode(node, nodes, clusterId)));
    // All nodes start together: a 3-voter quorum cannot elect a leader until two are up.
    await Promise.all(nodes.map((_, i) => startBroker(i)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { brokers: nodes.map((n) => `127.0.0.1:${n.port}`), dir: root, pids, stopBroker, startBroker, stop };
}

/** True when brokers answer metadata requests; used by up.ts to reuse a running cluster. */
export async function isKafkaReachable(brokers: string[]): Promise<boolean> {
  const admin = adminFor(brokers);
  try {
    await admin.connect();
    await admin.listTopics();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** Ready = this node answers metadata, lists itself, and sees every running peer. */
async function brokerSeesCluster(node: KafkaNode, runningCount: number): Promise<boolean> {
  const admin = adminFor([`127.0.0.1:${node.port}`]);
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    await admin.listTopics();
    return cluster.brokers.some((b) => b.nodeId === node.nodeId) && cluster.brokers.length >= runningCount;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

function adminFor(brokers: string[]) {
  return new Kafka({
    clientId: 'sluice-test-infra',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  }).admin();
}

async function formatNode(node: KafkaNode, nodes: KafkaNode[], clusterId: string): Promise<void> {
  await mkdir(join(node.dir, 'data'), { recursive: true });
  const properties = join(node.dir, 'server.properties');
  await writeFile(properties, serverProperties(node, nodes));
  await promisify(execFile)('java', ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', `-Dlog4j.configuration=file:${join(node.dir, '..', 'log4j.properties')}`, '-cp', `${kafkaLibsDir}/*`, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', properties, '--ignore-formatted'], { cwd: node.dir });
}

function serverProperties(node: KafkaNode, nodes: KafkaNode[]): string {
  const replication = nodes.length;
  const minInsync = Math.min(2, replication);
  const settings: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': node.nodeId,
    'controller.quorum.voters': nodes.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(','),
    listeners: `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${node.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
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
    // A killed broker should be noticed and fenced quickly in broker-failure tests.
    'broker.session.timeout.ms': 6000,
    'broker.heartbeat.interval.ms': 1000,
  };
  return Object.entries(settings).map(([key, value]) => `${key}=${value}`).join('\n') + '\n';
}

/** Kafka's Uuid format: 16 random bytes, base64url; one starting with '-' would read as a CLI flag. */
function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

const LOG4J_PROPERTIES = `log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
`;
