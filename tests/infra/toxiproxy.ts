// Toxiproxy (Shopify's TCP proxy whose faults are set over its HTTP API), built by provision.sh, for
// the fault runs (tests/faults, bench/faults): a private server on free loopback ports, one proxy per
// upstream (ClickHouse, the schema registry, a broker), each a `host:port` that Sluice is pointed at
// instead of the upstream. Faults are toxics (latency, bandwidth, timeout, reset_peer) or a proxy
// disabled (connections refused and the open ones closed). Stopped with its process group.
import { mkdtemp, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Toxiproxy, type Proxy as ToxiProxy } from 'toxiproxy-node-client'
import { freePort } from './ports.ts'
import { pollUntil } from './poll.ts'
import { killGroupsOnExit, logTail, spawnService, stopGroup } from './process-group.ts'

/** Kept in step with toxiproxy_version in provision.sh. */
export const TOXIPROXY_VERSION = 'v2.12.0'
const SERVER = fileURLToPath(new URL(`./.cache/toxiproxy-${TOXIPROXY_VERSION}/server`, import.meta.url))

export interface FaultProxy {
  /** Where Sluice connects instead of the upstream. */
  listen: string
  proxy: ToxiProxy
}

export interface ToxiproxyServer {
  /** A proxy to `upstream` (`host:port`) on a free loopback port. */
  proxy(name: string, upstream: string): Promise<FaultProxy>
  stop(): Promise<void>
}

export async function startToxiproxy(): Promise<ToxiproxyServer> {
  if (!existsSync(SERVER)) throw new Error(`toxiproxy is not built: run bash tests/infra/provision.sh (${SERVER})`)
  const dir = await mkdtemp(join(tmpdir(), 'sluice-toxiproxy-'))
  const port = await freePort()
  const service = spawnService(SERVER, ['-host', '127.0.0.1', '-port', String(port)], join(dir, 'server.log'), dir)
  const unregister = killGroupsOnExit(() => [service.pid], dir)
  const client = new Toxiproxy(`http://127.0.0.1:${port}`)
  await pollUntil(async () => (await client.getVersion()).length > 0, {
    what: 'toxiproxy',
    timeoutMs: 15_000,
    abortIf: () => (service.exited() ? `exited: ${logTail(service.logFile)}` : undefined),
  })
  return {
    async proxy(name, upstream) {
      const listen = `127.0.0.1:${await freePort()}`
      return { listen, proxy: await client.createProxy({ name, listen, upstream }) }
    },
    async stop() {
      unregister()
      await stopGroup(service.pid, 'SIGKILL')
      await rm(dir, { recursive: true, force: true })
    },
  }
}
