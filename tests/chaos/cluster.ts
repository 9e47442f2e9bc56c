// A distributed Sluice for chaos: a private 3-broker Kafka, the shared ClickHouse (a database of
// its own), and one process per role as the Helm chart splits them (transformer and dedup apart,
// so each can be killed on its own). Any role can be killed with SIGKILL and restarted; a
// restart reuses the role's data dir or starts on an empty one (a pod moved to another node).
import { createWriteStream, type WriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { eventually } from '../helpers/server.ts'
import { startKafka, type KafkaCluster } from '../infra/kafka.ts'
import { testRegistryUrl } from '../infra/services.ts'
import type { FaultProxy, ToxiproxyServer } from '../infra/toxiproxy.ts'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
import { distributedEnv, startNode, auth, type Node } from '../distributed/cluster.ts'

export const CHAOS_ROLES = ['ingest', 'transformer', 'dedup', 'router', 'sink', 'api', 'runner'] as const
export type ChaosRole = (typeof CHAOS_ROLES)[number]
/** A second runner, started with `isolatedRunner`: it reaches Kafka through proxies of its own. */
export type ClusterRole = ChaosRole | 'runner-2'

export const WEBHOOK_TRANSFORM =
  'function transform(evt) { return { name: "chaos/webhook." + evt.kind, data: evt, id: evt.ref } }'

export interface ChaosCluster {
  kafka: KafkaCluster
  database: string
  /** ClickHouse itself, for the checks (the nodes may reach it through a proxy). */
  clickhouseUrl: string
  /** With `toxiproxy`: the brokers' and controllers' proxies (tests/infra/kafka.ts) and `clickhouse`. */
  proxies: Map<string, FaultProxy>
  sideEffectsFile: string
  /** Node logs and side effects; kept when a run fails, so it can be read. */
  dir: string
  /** Role processes that exited without being killed by the harness (a crash is a finding). */
  unexpectedExits: string[]
  /** The processes running: every role, and `runner-2` with `isolatedRunner`. */
  roles: ClusterRole[]
  url(role: ClusterRole): string
  /** The role's ops listener (/healthz, /readyz, /metrics). */
  opsUrl(role: ClusterRole): string
  pid(role: ClusterRole): number
  eventKey: string
  webhookId: string
  kill(role: ChaosRole): Promise<void>
  restart(role: ChaosRole, options: { freshDataDir: boolean }): Promise<void>
  stop(options?: { keepDir?: boolean }): Promise<void>
}

const functionsFile = fileURLToPath(new URL('./functions.ts', import.meta.url))

export interface ChaosClusterOptions {
  /** Every connection of a Sluice process to a broker or ClickHouse goes through this proxy. */
  toxiproxy?: ToxiproxyServer
  /** The nodes' Kafka client, when not the test's (tests/helpers/kafka-bus.ts). */
  kafkaClient?: KafkaClientName
  /**
   * With `toxiproxy`: a second runner process (`runner-2`) whose every connection to a broker goes
   * through proxies of its own (`runner-2-broker-<id>`), so it can be cut off from its group alone.
   */
  isolatedRunner?: boolean
  /** With `toxiproxy`: Avro records with the test schema registry (tests/infra/services.ts), through a proxy `registry`. */
  schemaRegistry?: boolean
}

export async function startChaosCluster(name: string, options: ChaosClusterOptions = {}): Promise<ChaosCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-chaos-'))
  const sideEffectsFile = join(dir, 'side-effects.tsv')
  await writeFile(sideEffectsFile, '')
  const isolated = options.toxiproxy && options.isolatedRunner ? ['runner-2'] : []
  const kafka = await startKafka({ brokers: 3, proxy: options.toxiproxy, isolatedClients: isolated })
  const roles: ClusterRole[] = [...CHAOS_ROLES, ...(isolated as ClusterRole[])]
  const direct = distributedEnv(name, kafka.brokers)
  const proxies = new Map(kafka.proxies)
  if (options.toxiproxy) {
    const clickhouse = await options.toxiproxy.proxy('clickhouse', new URL(direct.SLUICE_CLICKHOUSE_URL!).host)
    proxies.set('clickhouse', clickhouse)
  }
  if (options.toxiproxy && options.schemaRegistry) {
    const registry = new URL(testRegistryUrl())
    const proxy = await options.toxiproxy.proxy('registry', registry.host)
    proxies.set('registry', proxy)
    registry.host = proxy.listen
    direct.SLUICE_SCHEMA_REGISTRY_URL = registry.toString().replace(/\/$/, '')
  }
  const env: NodeJS.ProcessEnv = {
    ...direct,
    ...(proxies.has('clickhouse') && { SLUICE_CLICKHOUSE_URL: `http://${proxies.get('clickhouse')!.listen}` }),
    ...(options.kafkaClient && { SLUICE_KAFKA_CLIENT: options.kafkaClient }),
    CHAOS_SIDE_EFFECTS_FILE: sideEffectsFile,
    // A restarted member joins once the killed one's session expired: 6 s, not 30, per restart.
    SLUICE_KAFKA_SESSION_TIMEOUT_MS: '6000',
    // Debug lines (on kafkajs its own joins and rebalances): the logs of a failed run need them.
    SLUICE_LOG_LEVEL: 'debug',
  }
  const nodes = new Map<ClusterRole, Node>()
  const logs = new Map<ClusterRole, WriteStream>()
  const starts = new Map<ClusterRole, number>()
  const unexpectedExits: string[] = []
  const killing = new Set<Node>()

  async function launch(role: ClusterRole, freshDataDir: boolean): Promise<void> {
    const roleDir = join(dir, role, freshDataDir ? `data-${starts.get(role) ?? 0}` : 'data')
    await mkdir(roleDir, { recursive: true })
    const runner = role === 'runner' || role === 'runner-2'
    const extra = runner ? ['--functions', functionsFile] : []
    const own = kafka.isolatedBrokers.get(role)
    const roleEnv = own ? { ...env, SLUICE_KAFKA_BROKERS: own.join(',') } : env
    const node = await startNode([runner ? 'runner' : role], roleEnv, extra, 'start', {
      dataDir: roleDir,
      startTimeoutMs: 120_000,
    })
    starts.set(role, (starts.get(role) ?? 0) + 1)
    const log = logs.get(role) ?? createWriteStream(join(dir, `${role}.log`), { flags: 'a' })
    logs.set(role, log)
    log.write(`--- start ${starts.get(role)} pid ${node.child.pid}\n`)
    node.child.stdout!.pipe(log, { end: false })
    node.child.stderr!.pipe(log, { end: false })
    nodes.set(role, node)
    node.child.once('exit', (code, signal) => {
      if (!killing.has(node))
        unexpectedExits.push(`${role} (pid ${node.child.pid}) exited by itself: code ${code}, signal ${signal}`)
    })
  }

  const stop = async (options: { keepDir?: boolean } = {}) => {
    for (const node of nodes.values()) killing.add(node)
    await Promise.all([...nodes.values()].map((n) => n.kill('SIGKILL')))
    await kafka.stop()
    for (const log of logs.values()) log.end()
    // 18.16 can take minutes to drop one (seen under load): the server goes on dropping it after
    // this gives up waiting, and the run's counts are not held up.
    await fetch(`${direct.SLUICE_CLICKHOUSE_URL}/`, {
      method: 'POST',
      body: `DROP DATABASE IF EXISTS ${env.SLUICE_CLICKHOUSE_DATABASE}`,
      signal: AbortSignal.timeout(10_000),
    }).catch(() => {})
    if (!options.keepDir) await rm(dir, { recursive: true, force: true })
  }
  try {
    // The api node first: it creates the ClickHouse tables the others write to.
    await launch('api', false)
    await Promise.all(roles.filter((r) => r !== 'api').map((r) => launch(r, false)))
    const api = nodes.get('api')!.url
    const eventKey: string = (await created(api, '/v1/keys', { env: 'production' })).key
    const webhookId: string = (await created(api, '/v1/webhooks', { name: 'chaos', transform: WEBHOOK_TRANSFORM })).id
    await eventually(
      async () => {
        const r = await fetch(`${api}/v1/functions`, { headers: auth }).then((res) => res.json())
        return r.data.length === 3 ? true : undefined
      },
      60_000,
      250,
    )
    // Ready when ingest knows the key and the webhook (the control plane reaches it through Kafka).
    await eventually(
      async () => {
        const key = await fetch(`${nodes.get('ingest')!.url}/e/${eventKey}`, {
          method: 'POST',
          body: '{"name":"chaos/warmup","data":{}}',
        })
        const hook = await fetch(`${nodes.get('ingest')!.url}/e/${webhookId}`, {
          method: 'POST',
          body: '{"kind":"warmup","ref":"warmup"}',
        })
        return key.status === 200 && hook.status === 200 ? true : undefined
      },
      60_000,
      250,
    )
    return {
      kafka,
      database: env.SLUICE_CLICKHOUSE_DATABASE!,
      clickhouseUrl: direct.SLUICE_CLICKHOUSE_URL!,
      proxies,
      sideEffectsFile,
      dir,
      roles,
      url: (role) => nodes.get(role)!.url,
      opsUrl: (role) => nodes.get(role)!.opsUrl ?? nodes.get(role)!.url,
      pid: (role) => nodes.get(role)!.child.pid!,
      eventKey,
      webhookId,
      unexpectedExits,
      async kill(role) {
        killing.add(nodes.get(role)!)
        await nodes.get(role)!.kill('SIGKILL')
      },
      restart: (role, options) => launch(role, options.freshDataDir),
      stop,
    }
  } catch (error) {
    await stop({ keepDir: true })
    throw error
  }
}

/** POSTs until the api answers 201 (a fresh api node may still be catching up on the control plane). */
async function created(api: string, path: string, body: unknown): Promise<Record<string, string>> {
  let last = ''
  return eventually(
    async () => {
      const response = await fetch(`${api}${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).catch((err: Error) => ({ status: 0, text: async () => err.message }))
      const text = await response.text()
      last = `${response.status} ${text}`
      return response.status === 201 ? JSON.parse(text).data : undefined
    },
    60_000,
    250,
  ).catch(() => {
    throw new Error(`POST ${path}: no 201 within 60 s; last answer ${last}`)
  })
}
