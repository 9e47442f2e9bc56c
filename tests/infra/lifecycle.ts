import { mkdir, rm, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { isClickHouseReachable, startClickHouse } from './clickhouse.ts'
import { CHDB_CORE_VERSION, CURRENT_COMMAND_MARK, startCurrentClickHouse } from './clickhouse-current.ts'
import { isKafkaReachable, startKafka } from './kafka.ts'
import { commandLineOf, stopGroup } from './process-group.ts'
import { APICURIO_VERSION, isRegistryReachable, REGISTRY_COMMAND_MARK, startRegistry } from './registry.ts'
import {
  brokersFromEnv,
  clickhouseCurrentUrlFromEnv,
  clickhouseUrlFromEnv,
  readServicesFile,
  registryUrlFromEnv,
  servicesFile,
  type Service,
  type ServicesFile,
} from './services.ts'

type Found = { address: string[] | string; pids: number[]; dir: string | null; startedByUs: boolean }

/** What identifies each service's process, so a recycled pid is never killed. */
const COMMAND_MARK: Record<Service, string> = {
  kafka: 'kafka.Kafka',
  clickhouse: 'clickhouse',
  clickhouseCurrent: CURRENT_COMMAND_MARK,
  registry: REGISTRY_COMMAND_MARK,
}

const log = (message: string) => console.log(`infra: ${message}`)
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`

/**
 * Makes a single-node Kafka, two ClickHouses (Debian's 18.16, 26.9) and a schema registry available
 * and records them in services.json: env vars first, then whatever a previous up left running,
 * else new detached servers that outlive this process until downServices().
 */
export async function upServices(): Promise<ServicesFile> {
  const previous = readServicesFile()
  const kafka = await provideKafka(previous)
  const clickhouse = await provideClickHouse(previous)
  const current = await provideCurrentClickHouse(previous)
  const registry = await provideRegistry(previous)
  // Over the previous record: fields that a newer up.ts wrote stay for its down.ts.
  const record: ServicesFile = {
    ...previous,
    kafkaBrokers: kafka.address as string[],
    clickhouseUrl: clickhouse.address as string,
    clickhouseCurrentUrl: current.address as string,
    schemaRegistryUrl: registry.address as string,
    pids: {
      ...previous?.pids,
      kafka: kafka.pids,
      clickhouse: clickhouse.pids,
      clickhouseCurrent: current.pids,
      registry: registry.pids,
    },
    dirs: {
      ...previous?.dirs,
      kafka: kafka.dir,
      clickhouse: clickhouse.dir,
      clickhouseCurrent: current.dir,
      registry: registry.dir,
    },
    startedByUs: {
      ...previous?.startedByUs,
      kafka: kafka.startedByUs,
      clickhouse: clickhouse.startedByUs,
      clickhouseCurrent: current.startedByUs,
      registry: registry.startedByUs,
    },
  }
  await mkdir(dirname(servicesFile), { recursive: true })
  await writeFile(servicesFile, JSON.stringify(record, null, 2) + '\n')
  log(`wrote ${servicesFile}`)
  return record
}

/** Stops what upServices started (never what came from env vars) and forgets it. */
export async function downServices(): Promise<void> {
  const record = readServicesFile()
  if (record === undefined) {
    log('nothing recorded; nothing to stop')
    return
  }
  const services: Service[] = ['kafka', 'clickhouse', 'clickhouseCurrent', 'registry']
  await Promise.all(services.map((service) => stopRecorded(record, service)))
  await rm(servicesFile, { force: true })
}

async function provideKafka(previous: ServicesFile | undefined): Promise<Found> {
  const fromEnv = brokersFromEnv()
  if (fromEnv !== undefined) {
    log(`kafka: using SLUICE_TEST_KAFKA_BROKERS=${fromEnv.join(',')}`)
    return { address: fromEnv, pids: [], dir: null, startedByUs: false }
  }
  if (previous !== undefined && (await isKafkaReachable(previous.kafkaBrokers))) {
    log(`kafka: reusing ${previous.kafkaBrokers.join(',')} from a previous up`)
    return reused(previous, 'kafka', previous.kafkaBrokers)
  }
  if (previous !== undefined) await stopRecorded(previous, 'kafka')
  const started = Date.now()
  const cluster = await startKafka({ brokers: 1, keepAfterExit: true })
  log(`kafka: started ${cluster.brokers.join(',')} in ${seconds(started)} (data in ${cluster.dir})`)
  return { address: cluster.brokers, pids: cluster.pids(), dir: cluster.dir, startedByUs: true }
}

async function provideClickHouse(previous: ServicesFile | undefined): Promise<Found> {
  const fromEnv = clickhouseUrlFromEnv()
  if (fromEnv !== undefined) {
    log(`clickhouse: using SLUICE_TEST_CLICKHOUSE_URL=${fromEnv}`)
    return { address: fromEnv, pids: [], dir: null, startedByUs: false }
  }
  if (previous !== undefined && (await isClickHouseReachable(previous.clickhouseUrl))) {
    log(`clickhouse: reusing ${previous.clickhouseUrl} from a previous up`)
    return reused(previous, 'clickhouse', previous.clickhouseUrl)
  }
  if (previous !== undefined) await stopRecorded(previous, 'clickhouse')
  const started = Date.now()
  const server = await startClickHouse({ keepAfterExit: true })
  log(`clickhouse: started ${server.url} in ${seconds(started)} (data in ${server.dir})`)
  return { address: server.url, pids: [server.pid], dir: server.dir, startedByUs: true }
}

async function provideCurrentClickHouse(previous: ServicesFile | undefined): Promise<Found> {
  const fromEnv = clickhouseCurrentUrlFromEnv()
  if (fromEnv !== undefined) {
    log(`clickhouse ${CHDB_CORE_VERSION}: using SLUICE_TEST_CLICKHOUSE_CURRENT_URL=${fromEnv}`)
    return { address: fromEnv, pids: [], dir: null, startedByUs: false }
  }
  const recorded = previous?.clickhouseCurrentUrl
  if (previous !== undefined && recorded !== undefined && (await isClickHouseReachable(recorded))) {
    log(`clickhouse ${CHDB_CORE_VERSION}: reusing ${recorded} from a previous up`)
    return reused(previous, 'clickhouseCurrent', recorded)
  }
  if (previous !== undefined && recorded !== undefined) await stopRecorded(previous, 'clickhouseCurrent')
  const started = Date.now()
  const server = await startCurrentClickHouse({ keepAfterExit: true })
  log(`clickhouse ${CHDB_CORE_VERSION}: started ${server.url} in ${seconds(started)} (data in ${server.dir})`)
  return { address: server.url, pids: [server.pid], dir: server.dir, startedByUs: true }
}

async function provideRegistry(previous: ServicesFile | undefined): Promise<Found> {
  const fromEnv = registryUrlFromEnv()
  if (fromEnv !== undefined) {
    log(`schema registry: using SLUICE_TEST_REGISTRY_URL=${fromEnv}`)
    return { address: fromEnv, pids: [], dir: null, startedByUs: false }
  }
  const recorded = previous?.schemaRegistryUrl
  if (previous !== undefined && recorded !== undefined && (await isRegistryReachable(recorded))) {
    log(`schema registry: reusing ${recorded} from a previous up`)
    return reused(previous, 'registry', recorded)
  }
  if (previous !== undefined && recorded !== undefined) await stopRecorded(previous, 'registry')
  const started = Date.now()
  const server = await startRegistry({ keepAfterExit: true })
  log(`schema registry (Apicurio ${APICURIO_VERSION}): started ${server.url} in ${seconds(started)}`)
  return { address: server.url, pids: [server.pid], dir: server.dir, startedByUs: true }
}

function reused(previous: ServicesFile, service: Service, address: string[] | string): Found {
  const { pids, dirs, startedByUs } = previous
  return { address, pids: pids[service] ?? [], dir: dirs[service] ?? null, startedByUs: startedByUs[service] ?? false }
}

/** Also used on a stale record (server died or hangs) so a half-dead one cannot leak. */
async function stopRecorded(record: ServicesFile, service: Service): Promise<void> {
  if (record.startedByUs[service] !== true) {
    log(`${service}: not started by up; leaving it running`)
    return
  }
  const ours = (record.pids[service] ?? []).filter((pid) => commandLineOf(pid).includes(COMMAND_MARK[service]))
  await Promise.all(ours.map((pid) => stopGroup(pid, 'SIGKILL')))
  const dir = record.dirs[service] ?? null
  if (dir !== null) await rm(dir, { recursive: true, force: true })
  log(`${service}: stopped pids ${ours.join(',') || '(none left)'}${dir === null ? '' : `, removed ${dir}`}`)
}
