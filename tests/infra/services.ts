import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * Written by up.ts, read by test files and down.ts. SLUICE_TEST_SERVICES_FILE points up and
 * down at another file, to try them without touching the services everyone shares.
 */
export const servicesFile =
  process.env.SLUICE_TEST_SERVICES_FILE?.trim() || fileURLToPath(new URL('./.cache/services.json', import.meta.url))

export type Service = 'kafka' | 'clickhouse' | 'clickhouseCurrent' | 'registry'

export type ServicesFile = {
  kafkaBrokers: string[]
  /** Debian's ClickHouse 18.16. */
  clickhouseUrl: string
  /** ClickHouse 26.9 (clickhouse-current.ts); absent from a file written before it existed. */
  clickhouseCurrentUrl?: string
  /** Apicurio Registry's Confluent-compatible API (registry.ts); absent from a file written before it existed. */
  schemaRegistryUrl?: string
  /** Process-group leaders, recorded so down.ts (another process) can stop them. */
  pids: Partial<Record<Service, number[]>>
  dirs: Partial<Record<Service, string | null>>
  /** false when the service came from an env var or was already running elsewhere. */
  startedByUs: Partial<Record<Service, boolean>>
}

export type TestServices = { kafkaBrokers: string[]; clickhouseUrl: string }

export function readServicesFile(): ServicesFile | undefined {
  try {
    return JSON.parse(readFileSync(servicesFile, 'utf8')) as ServicesFile
  } catch {
    return undefined
  }
}

export function brokersFromEnv(): string[] | undefined {
  const list = process.env.SLUICE_TEST_KAFKA_BROKERS?.split(',')
    .map((b) => b.trim())
    .filter(Boolean)
  return list !== undefined && list.length > 0 ? list : undefined
}

export function clickhouseUrlFromEnv(): string | undefined {
  return process.env.SLUICE_TEST_CLICKHOUSE_URL?.trim() || undefined
}

export function clickhouseCurrentUrlFromEnv(): string | undefined {
  return process.env.SLUICE_TEST_CLICKHOUSE_CURRENT_URL?.trim() || undefined
}

export function registryUrlFromEnv(): string | undefined {
  return process.env.SLUICE_TEST_REGISTRY_URL?.trim() || undefined
}

/**
 * The shared schema registry (a Confluent-compatible API's base URL): SLUICE_TEST_REGISTRY_URL
 * wins, then what up.ts recorded. Missing is an error, not a skip, as for ClickHouse 26.9.
 */
export function testRegistryUrl(): string {
  const url = registryUrlFromEnv() ?? readServicesFile()?.schemaRegistryUrl
  if (url === undefined) {
    throw new Error(
      'The schema registry is not running: start it with `node tests/infra/up.ts` ' +
        '(after `bash tests/infra/provision.sh`), or point at your own Confluent-compatible registry ' +
        'with SLUICE_TEST_REGISTRY_URL=http://host:port[/path] (its compatibility level BACKWARD).',
    )
  }
  return url
}

/**
 * Where the shared Kafka and ClickHouse are: the env vars win (a developer's own
 * servers), then what up.ts recorded. Starting nothing here keeps test files fast
 * and lets several of them share one broker.
 */
export function testServices(): TestServices {
  const recorded = readServicesFile()
  const kafkaBrokers = brokersFromEnv() ?? recorded?.kafkaBrokers
  const clickhouseUrl = clickhouseUrlFromEnv() ?? recorded?.clickhouseUrl
  if (kafkaBrokers === undefined || clickhouseUrl === undefined) {
    throw new Error(
      'Test services are not running. Run the whole suite with `npm test` (tests/run.sh starts them), ' +
        'or start them once with `node tests/infra/up.ts` (stop with `node tests/infra/down.ts`), ' +
        'or point at your own with SLUICE_TEST_KAFKA_BROKERS=host:port[,host:port] and ' +
        'SLUICE_TEST_CLICKHOUSE_URL=http://host:port. Missing tools: `bash tests/infra/provision.sh`.',
    )
  }
  return { kafkaBrokers, clickhouseUrl }
}

export type ClickHouseServerUnderTest = {
  /** Debian's 18.16, or the current release (26.9 from up.ts): tests name the version the server reports. */
  server: 'debian' | 'current'
  url: string
}

/**
 * Both ClickHouse servers the store must work on, oldest first: SLUICE_TEST_CLICKHOUSE_URL
 * and SLUICE_TEST_CLICKHOUSE_CURRENT_URL win, then what up.ts recorded. A missing one is an
 * error, not a skip: a suite that quietly ran on one release would prove half its claim.
 */
export function clickHouseServers(): ClickHouseServerUnderTest[] {
  const current = clickhouseCurrentUrlFromEnv() ?? readServicesFile()?.clickhouseCurrentUrl
  if (current === undefined) {
    throw new Error(
      'ClickHouse 26.9 is not running: start it with `node tests/infra/up.ts` ' +
        '(after `bash tests/infra/provision.sh`), ' +
        'or point at your own current release with SLUICE_TEST_CLICKHOUSE_CURRENT_URL=http://host:port.',
    )
  }
  return [
    { server: 'debian', url: testServices().clickhouseUrl },
    { server: 'current', url: current },
  ]
}
