// The only module that reads process.env. Flags win over env vars, env vars over defaults;
// one TypeBox schema validates the result, which is frozen and handed out in slices.
import { readFileSync } from 'node:fs'
import { type TOptional, type TSchema, type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SluiceError } from '../core/errors.ts'
import type { RocksOptions } from '../core/rocks.ts'
import { DEFAULTS, SETTINGS, type SettingName, secretFileLabel, settingLabel, settingOf } from './settings.ts'
import type { Rule } from './setting-kinds.ts'

type Settings = typeof SETTINGS
/** A setting without a default is optional: unset unless given. */
type Properties = {
  [K in SettingName]: undefined extends Settings[K]['default']
    ? TOptional<Settings[K]['schema']>
    : Settings[K]['schema']
}

/** A setting's plain JSON Schema (setting-kinds.ts) as the TypeBox schema that checks it. */
function checked(rule: Rule): TSchema {
  const { type, items, anyOf, ...keywords } = rule
  if (anyOf) return Type.Union(anyOf.map((l) => Type.Literal(l.const)))
  if (type === 'array') return Type.Array(checked(items!))
  if (type === 'integer') return Type.Integer(keywords)
  if (type === 'boolean') return Type.Boolean()
  return Type.String(keywords)
}

const properties = Object.fromEntries(
  Object.entries(SETTINGS).map(([name, s]) => {
    const schema = checked(s.schema as Rule)
    return [name, s.default === undefined ? Type.Optional(schema) : schema]
  }),
) as unknown as Properties

/** The settings, and the command that loads them (`mode`: dev, start). */
export const ConfigSchema = Type.Object({
  ...properties,
  mode: Type.Union([Type.Literal('dev'), Type.Literal('start')]),
})

export type Config = Readonly<Static<typeof ConfigSchema>>
/** Values given in code or on the command line, by setting name; `<name>File` for a secret's file. */
export type Flags = Record<string, string | boolean | undefined>

export function loadConfig(mode: 'dev' | 'start', flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = { ...DEFAULTS, mode }
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const flag = flags[name]
    const fromEnv = env[setting.env]
    if (flag !== undefined) raw[name] = typeof flag === 'boolean' ? flag : setting.parse(flag)
    else if (fromEnv !== undefined && fromEnv !== '') raw[name] = setting.parse(fromEnv)
    else if (setting.secret) raw[name] = readSecretFile(name as SettingName, secretFile(name, setting.env, flags, env))
    if (raw[name] === undefined) delete raw[name]
  }
  if (!Value.Check(ConfigSchema, raw)) {
    const first = Value.Errors(ConfigSchema, raw).First()!
    const field = first.path.slice(1).split('/')[0]
    const named = settingOf(field) ? settingLabel(field as SettingName) : field
    throw new SluiceError('CONFIG_INVALID', `${named}: ${first.message}`)
  }
  const config = raw as Config
  if (mode === 'start' && !config.signingKey)
    throw new SluiceError(
      'CONFIG_INVALID',
      `${settingLabel('signingKey')}: required by sluice start (at least 16 characters)`,
    )
  checkPairs(config)
  return Object.freeze(config)
}

/** Settings that mean nothing alone, or nothing with another: refused at startup rather than silently ignored. */
function checkPairs(config: Config): void {
  const need = (field: SettingName, other: SettingName, why: string) => {
    if (config[field] !== undefined && config[other] === undefined) {
      throw new SluiceError('CONFIG_INVALID', `${settingLabel(other)}: required with ${settingLabel(field)}: ${why}`)
    }
  }
  need('oidcIssuer', 'oidcClientId', 'SSO signs in as a client of the provider')
  need('oidcIssuer', 'oidcClientSecret', 'SSO signs in as a client of the provider')
  need('oidcIssuer', 'publicUrl', 'the provider sends browsers back to it')
  need('kafkaSaslMechanism', 'kafkaUsername', 'SASL signs in with a user name')
  need('kafkaSaslMechanism', 'kafkaPassword', 'SASL signs in with a password')
  need('kafkaUsername', 'kafkaSaslMechanism', 'say which SASL mechanism the brokers take')
  need('kafkaCertFile', 'kafkaKeyFile', 'a client certificate needs its private key')
  need('kafkaKeyFile', 'kafkaCertFile', 'a private key needs its client certificate')
  need('clickhousePassword', 'clickhouseUser', 'the password belongs to a user')
  need('schemaRegistryPassword', 'schemaRegistryUser', 'the password belongs to a user')
  // ClickHouse's events are deleted as its operators choose (docs/clickhouse.md), not by Sluice.
  if (config.eventRetentionMs > 0 && config.kafkaBrokers.length > 0)
    throw new SluiceError(
      'CONFIG_INVALID',
      `${settingLabel('eventRetentionMs')}: embedded mode only; in distributed mode ClickHouse keeps the events (a TTL or DROP PARTITION, docs/clickhouse.md)`,
    )
  // kafkajs has no lz4, zstd or snappy codec: refused rather than sending uncompressed.
  if (config.kafkaClient === 'kafkajs' && !['none', 'gzip'].includes(config.kafkaCompression))
    throw new SluiceError(
      'CONFIG_INVALID',
      `${settingLabel('kafkaCompression')}: ${config.kafkaCompression} needs kafkaClient platformatic; kafkajs compresses with gzip only`,
    )
}

/** `sluice runner` and startRunner serve functions: from a file, or given in code. */
export function checkRunnerConfig(config: Config, functionsGiven: boolean): void {
  // Against Kafka a runner without a module of its own serves the apps synced (docs/inngest-sdk.md).
  if (!functionsGiven && !config.functionsFile && config.kafkaBrokers.length === 0)
    throw new SluiceError(
      'CONFIG_INVALID',
      `${settingLabel('functionsFile')}: sluice runner needs the module that exports the functions`,
    )
}

/** Against Kafka a runner process plays the runner role only; embedded, it is a whole node. */
export function runnerConfig(config: Config): Config {
  return config.kafkaBrokers.length > 0 ? Object.freeze({ ...config, roles: ['runner' as const] }) : config
}

/** RocksDB's memory and open-file bounds and durability (core/rocks.ts) from the config (or DEFAULTS in tests). */
type RocksSettings = Pick<
  Config,
  'rocksdbWriteBufferMb' | 'rocksdbWriteBuffers' | 'rocksdbMaxOpenFiles' | 'durability' | 'kafkaBrokers'
>
export const rocksOptionsOf = (config: RocksSettings): RocksOptions => ({
  writeBufferMb: config.rocksdbWriteBufferMb,
  writeBuffers: config.rocksdbWriteBuffers,
  maxOpenFiles: config.rocksdbMaxOpenFiles,
  // Distributed: Kafka (acks=all) holds what was acknowledged, and each partition's state is rebuilt
  // from its changelog at every assignment, so a sync of the local RocksDB would buy nothing.
  durability: config.kafkaBrokers.length > 0 ? 'off' : config.durability,
})

const secretFile = (name: string, envVar: string, flags: Flags, env: NodeJS.ProcessEnv) =>
  (flags[`${name}File`] as string | undefined) ?? env[`${envVar}_FILE`]

/** A secret from a file (a mounted Secret): the content, without the trailing newline editors add. */
function readSecretFile(name: SettingName, path: string | undefined): string | undefined {
  if (!path) return undefined
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new SluiceError('CONFIG_INVALID', `${secretFileLabel(name)}: cannot read ${path}: ${code}`)
  }
}
