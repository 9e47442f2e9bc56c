import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Written by up.ts, read by test files and down.ts. */
export const servicesFile = fileURLToPath(new URL('./.cache/services.json', import.meta.url));

export type ServicesFile = {
  kafkaBrokers: string[];
  clickhouseUrl: string;
  /** Process-group leaders, recorded so down.ts (another process) can stop them. */
  pids: { kafka: number[]; clickhouse: number[] };
  dirs: { kafka: string | null; clickhouse: string | null };
  /** false when the service came from an env var or was already running elsewhere. */
  startedByUs: { kafka: boolean; clickhouse: boolean };
};

export type TestServices = { kafkaBrokers: string[]; clickhouseUrl: string };

export function readServicesFile(): ServicesFile | undefined {
  try {
    return JSON.parse(readFileSync(servicesFile, 'utf8')) as ServicesFile;
  } catch {
    return undefined;
  }
}

export function brokersFromEnv(): string[] | undefined {
  const list = process.env.SLUICE_TEST_KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean);
  return list !== undefined && list.length > 0 ? list : undefined;
}

export function clickhouseUrlFromEnv(): string | undefined {
  return process.env.SLUICE_TEST_CLICKHOUSE_URL?.trim() || undefined;
}

/**
 * Where the shared Kafka and ClickHouse are: the env vars win (a developer's own
 * servers), then what up.ts recorded. Starting nothing here keeps test files fast
 * and lets several of them share one broker.
 */
export function testServices(): TestServices {
  const recorded = readServicesFile();
  const kafkaBrokers = brokersFromEnv() ?? recorded?.kafkaBrokers;
  const clickhouseUrl = clickhouseUrlFromEnv() ?? recorded?.clickhouseUrl;
  if (kafkaBrokers === undefined || clickhouseUrl === undefined) {
    throw new Error(
      'Test services are not running. Run the whole suite with `npm test` (tests/run.sh starts them), ' +
        'or start them once with `node tests/infra/up.ts` (stop with `node tests/infra/down.ts`), ' +
        'or point at your own with SLUICE_TEST_KAFKA_BROKERS=host:port[,host:port] and ' +
        'SLUICE_TEST_CLICKHOUSE_URL=http://host:port. Missing tools: `bash tests/infra/provision.sh`.',
    );
  }
  return { kafkaBrokers, clickhouseUrl };
}
