// Connection settings of the distributed mode turned into the adapters' options: PEM files read
// once at startup (a missing file names its setting), credentials kept out of URLs and logs.
import { readFileSync } from 'node:fs'
import { SluiceError } from '../core/errors.ts'
import type { KafkaBusConfig } from '../bus/kafka-config.ts'
import type { ClickHouseConfig } from '../store/clickhouse.ts'
import type { QueryLimits } from '../store/clickhouse-read.ts'
import type { SqlLimits } from '../store/insights-types.ts'
import type { Config } from '../config/config.ts'
import { settingLabel } from '../config/settings.ts'

export function kafkaSecurity(config: Config): Pick<KafkaBusConfig, 'tls' | 'sasl'> {
  const tlsWanted = config.kafkaTls || config.kafkaCaFile !== undefined || config.kafkaCertFile !== undefined
  return {
    tls: tlsWanted
      ? { ca: pem(config, 'kafkaCaFile'), cert: pem(config, 'kafkaCertFile'), key: pem(config, 'kafkaKeyFile') }
      : undefined,
    // config.ts refuses a mechanism without a user name and password.
    sasl: config.kafkaSaslMechanism
      ? { mechanism: config.kafkaSaslMechanism, username: config.kafkaUsername!, password: config.kafkaPassword! }
      : undefined,
  }
}

export function clickhouseConnection(config: Config): ClickHouseConfig {
  return {
    url: config.clickhouseUrl!,
    database: config.clickhouseDatabase,
    username: config.clickhouseUser,
    password: config.clickhousePassword,
    caCert: pem(config, 'clickhouseCaFile'),
    limits: queryLimits(config),
    cluster: config.clickhouseCluster || undefined,
    insertQuorum: config.clickhouseInsertQuorum,
  }
}

/** What one read of the ClickHouse store may cost (store/clickhouse-read.ts QueryLimits). */
export function queryLimits(config: Pick<Config, StoreLimitSetting>): QueryLimits {
  return { queryTimeoutSeconds: config.clickhouseQueryTimeoutSeconds, maxRowsToRead: config.clickhouseMaxRowsToRead }
}
type StoreLimitSetting = 'clickhouseQueryTimeoutSeconds' | 'clickhouseMaxRowsToRead'

/** The Insights SQL console's caps (store/insights-types.ts SqlLimits). */
export function insightsLimits(config: Pick<Config, InsightsLimitSetting>): SqlLimits {
  return {
    maxRows: config.insightsMaxRows,
    maxResultBytes: config.insightsMaxResultBytes,
    timeoutSeconds: config.insightsQueryTimeoutSeconds,
    maxRowsToRead: config.clickhouseMaxRowsToRead,
  }
}

type InsightsLimitSetting =
  | 'insightsMaxRows'
  | 'insightsMaxResultBytes'
  | 'insightsQueryTimeoutSeconds'
  | StoreLimitSetting

export function registryAuth(config: Config): { username: string; password: string } | undefined {
  if (!config.schemaRegistryUser) return undefined
  return { username: config.schemaRegistryUser, password: config.schemaRegistryPassword ?? '' }
}

/** A URL fit for a log line: a password written into it (user:password@host) is masked. */
export function redactUrl(url: string | undefined): string | null {
  if (url === undefined) return null
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString().replace(/\/$/, '')
  } catch {
    return '(unparsable URL)'
  }
}

type PemSetting = 'kafkaCaFile' | 'kafkaCertFile' | 'kafkaKeyFile' | 'clickhouseCaFile'

function pem(config: Config, field: PemSetting): string | undefined {
  const path = config[field]
  if (path === undefined) return undefined
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new SluiceError('CONFIG_INVALID', `${settingLabel(field)}: cannot read ${path}: ${code}`)
  }
}
