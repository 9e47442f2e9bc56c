// The network faults of the fault runs, each set through Toxiproxy (tests/infra/toxiproxy.ts) on the
// proxies a chaos cluster started with one puts between every Sluice process and each broker and
// ClickHouse (tests/chaos/cluster.ts), and each undone by the function its start returns.
import type { Proxy as ToxiProxy } from 'toxiproxy-node-client'
import type { ChaosCluster } from '../chaos/cluster.ts'

export interface Fault {
  name: string
  /** What a reader of the table needs to know. */
  what: string
  durationMs: number
  /** A dependency is unreachable: some process's /readyz must answer 503 while it lasts. */
  unreachable: boolean
  /** The cluster needs its second runner, reaching Kafka through proxies of its own (tests/chaos/cluster.ts). */
  isolatedRunner?: boolean
  /** The cluster writes Avro with a schema registry, reached through the proxy `registry`. */
  schemaRegistry?: boolean
  /** Sets the fault; the returned function heals it. */
  start(cluster: ChaosCluster): Promise<() => Promise<void>>
}

const brokerProxies = (cluster: ChaosCluster) =>
  [...cluster.proxies].filter(([name]) => name.startsWith('broker-')).map(([, p]) => p.proxy)

/** One toxic on each proxy, both directions; removed on heal. */
async function toxic(proxies: ToxiProxy[], type: string, attributes: Record<string, number>) {
  const toxics = await Promise.all(
    proxies.flatMap((proxy) =>
      (['upstream', 'downstream'] as const).map((stream) =>
        proxy.addToxic({ name: `${type}-${stream}`, type: type as never, stream, toxicity: 1, attributes }),
      ),
    ),
  )
  return async () => {
    await Promise.all(toxics.map((t) => t.remove()))
  }
}

/** The proxies refuse connections and close the open ones; enabled again on heal. */
async function disable(proxies: ToxiProxy[]) {
  await Promise.all(proxies.map((p) => p.update({ enabled: false, listen: p.listen, upstream: p.upstream })))
  return async () => {
    await Promise.all(proxies.map((p) => p.update({ enabled: true, listen: p.listen, upstream: p.upstream })))
  }
}

/** The faults of the full run (bench/faults); the short form in npm test takes some, shorter. */
export function faults(scale = 1): Fault[] {
  const ms = (seconds: number) => Math.round(seconds * 1000 * scale)
  return [
    {
      name: 'kafka-latency',
      what: '0.2-2 s latency (1.1 s ± 0.9) on every broker connection',
      durationMs: ms(30),
      unreachable: false,
      start: (c) => toxic(brokerProxies(c), 'latency', { latency: 1100, jitter: 900 }),
    },
    {
      name: 'kafka-bandwidth',
      what: 'every broker connection capped at 32 KB/s each way',
      durationMs: ms(30),
      unreachable: false,
      start: (c) => toxic(brokerProxies(c), 'bandwidth', { rate: 32 }),
    },
    {
      name: 'kafka-reset',
      what: 'every broker connection reset by peer (open ones and new ones)',
      durationMs: ms(20),
      unreachable: true,
      start: (c) => toxic(brokerProxies(c), 'reset_peer', { timeout: 0 }),
    },
    {
      name: 'kafka-black-hole',
      what: 'no byte reaches or leaves a broker; connections hang until closed 5 s later',
      durationMs: ms(45),
      unreachable: true,
      start: (c) => toxic(brokerProxies(c), 'timeout', { timeout: 5000 }),
    },
    {
      name: 'broker-cut-off',
      what: 'broker 1 cut off from clients and from the quorum (fenced; its leadership moves)',
      durationMs: ms(30),
      unreachable: false,
      start: (c) =>
        disable(
          [...c.proxies]
            .filter(([name]) => name === 'broker-1' || /^controller-(1-\d|\d-1)$/.test(name))
            .map(([, p]) => p.proxy),
        ),
    },
    {
      name: 'runner-cut-off',
      what: 'the second runner cut off from every broker while it keeps running (its group moves on without it)',
      durationMs: ms(30),
      unreachable: true,
      isolatedRunner: true,
      start: (c) =>
        disable([...c.proxies].filter(([name]) => name.startsWith('runner-2-broker-')).map(([, p]) => p.proxy)),
    },
    {
      name: 'registry-gone',
      what: 'the schema registry refuses connections (records are Avro; every process keeps the schemas it read)',
      durationMs: ms(30),
      unreachable: false,
      schemaRegistry: true,
      start: (c) => disable([c.proxies.get('registry')!.proxy]),
    },
    {
      name: 'clickhouse-gone',
      what: 'ClickHouse refuses connections and drops the open ones',
      durationMs: ms(60),
      unreachable: true,
      start: (c) => disable([c.proxies.get('clickhouse')!.proxy]),
    },
  ]
}
