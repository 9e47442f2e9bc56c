// Sluice processes in distributed mode against the test Kafka and ClickHouse.
import { tempDir, spawnServer, removeDir, type ChildServer, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { testServices } from '../infra/services.ts'
import { kafkaClient } from '../helpers/kafka-bus.ts'

export interface Node extends ChildServer {
  roles: string[]
  kill(signal?: NodeJS.Signals): Promise<void>
}

/** Settings of a distributed node; on the Kafka client of the test (tests/helpers/kafka-bus.ts), passed explicitly. */
export function distributedEnv(name: string, brokers?: string[]): NodeJS.ProcessEnv {
  const services = testServices()
  const unique = `${name}_${process.pid}_${Date.now().toString(36)}`
  return {
    SLUICE_KAFKA_BROKERS: (brokers ?? services.kafkaBrokers).join(','),
    SLUICE_KAFKA_CLIENT: kafkaClient,
    SLUICE_CLICKHOUSE_URL: services.clickhouseUrl,
    SLUICE_CLICKHOUSE_DATABASE: unique,
    SLUICE_TOPIC_PREFIX: unique,
    SLUICE_SIGNING_KEY: TEST_SIGNING_KEY,
    SLUICE_PARTITIONS: '4',
    SLUICE_LOG_LEVEL: 'info',
  }
}

export interface NodeOptions {
  /** Start on this data dir and leave it when the node stops (a container restarted in its pod); by default a fresh one, removed. */
  dataDir?: string
  /** How long the node may take to come up (a loaded machine, a consumer group waiting for a killed member). */
  startTimeoutMs?: number
}

export async function startNode(
  roles: string[],
  env: NodeJS.ProcessEnv,
  extraArgs: string[] = [],
  command: 'start' | 'dev' = 'start',
  options: NodeOptions = {},
): Promise<Node> {
  const dir = options.dataDir ?? (await tempDir('sluice-node-'))
  const args =
    roles[0] === 'runner' ? ['runner', ...extraArgs] : [command, ...roles.flatMap((r) => ['--role', r]), ...extraArgs]
  // --ops-port 0: roles without HTTP serve /healthz and /readyz on a free port of their own.
  const node = await spawnServer(
    [...args, '--port', '0', '--ops-port', '0', '--data-dir', dir],
    env,
    options.startTimeoutMs,
  )
  if (options.dataDir === undefined) node.stopped.then(() => removeDir(dir))
  // The client the test means (distributedEnv sets it), not one inherited or defaulted by the child.
  if (env.SLUICE_KAFKA_CLIENT !== undefined && node.up.kafkaClient !== env.SLUICE_KAFKA_CLIENT) {
    node.child.kill('SIGKILL')
    throw new Error(`the node runs on Kafka client ${node.up.kafkaClient}, the test on ${env.SLUICE_KAFKA_CLIENT}`)
  }
  return {
    ...node,
    roles,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (node.child.exitCode === null) node.child.kill(signal)
      await node.stopped
    },
  }
}

export const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
