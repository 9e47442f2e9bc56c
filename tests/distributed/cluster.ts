// Sluice processes in distributed mode against the test Kafka and ClickHouse.
import type { Test } from 'tap'
import {
  eventually,
  getJson,
  postJson,
  tempDir,
  spawnServer,
  removeDir,
  type ChildServer,
  TEST_SIGNING_KEY,
} from '../helpers/server.ts'
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

/**
 * A cluster serving the functions of `functionsFile`: api, ingest, dedup + sink, the router and two
 * runners, each a process, killed when `t` ends. Ready once the runners registered `functionCount`
 * functions and ingest takes events with the production key it returns.
 */
export async function functionsCluster(
  t: Test,
  name: string,
  functionsFile: string,
  functionCount: number,
  extraEnv: NodeJS.ProcessEnv = {},
) {
  const env = { ...distributedEnv(name), ...extraEnv }
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill('SIGKILL'))))
  const start = async (roles: string[], args: string[] = []) => {
    const node = await startNode(roles, env, args, 'start', { startTimeoutMs: 120_000 })
    nodes.push(node)
    return node
  }
  const startRunner = () => start(['runner'], ['--functions', functionsFile])
  const [api, ingest, , router] = await Promise.all([
    start(['api']),
    start(['ingest']),
    start(['dedup', 'sink']),
    start(['router']),
  ])
  const runners = await Promise.all([startRunner(), startRunner()])
  const registered = async () => (await getJson(`${api.url}/v1/functions`, auth)).body.data?.length ?? 0
  await eventually(async () => ((await registered()) >= functionCount ? true : undefined), 120_000, 250)
  const eventKey: string = (await postJson(`${api.url}/v1/keys`, { env: 'production' }, auth)).body.data.key
  const warm = async () => (await postJson(`${ingest.url}/e/${eventKey}`, { name: 'test/warmup', data: {} })).status
  await eventually(async () => ((await warm()) === 200 ? true : undefined), 60_000, 100)
  return { api, ingest, router, runners, eventKey, start, startRunner }
}

/**
 * A webhook pipeline as processes: the api first (it creates the ClickHouse tables), then one node per
 * entry of `roles` (`started`, in order), all killed with `signal` when `t` ends. `send` posts a
 * webhook request until ingest knows the webhook (it learns new ones from the control topic).
 */
export async function webhookCluster(
  t: Test,
  env: NodeJS.ProcessEnv,
  roles: string[][],
  signal: NodeJS.Signals = 'SIGKILL',
) {
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill(signal))))
  const api = await startNode(['api'], env)
  nodes.push(api)
  const started = await Promise.all(roles.map((r) => startNode(r, env)))
  nodes.push(...started)
  const ingest = started[roles.findIndex((r) => r.includes('ingest'))]
  return {
    nodes,
    api,
    ingest,
    started,
    rest: (path: string) => getJson(`${api.url}${path}`, auth),
    createWebhook: async (body: object) => (await postJson(`${api.url}/v1/webhooks`, body, auth)).body.data,
    send: (id: string, body: object) =>
      eventually(
        async () => {
          const r = await postJson(`${ingest.url}/e/${id}`, body)
          return r.status === 200 ? (r.body.request_id as string) : undefined
        },
        30_000,
        100,
      ),
  }
}
