// Every setting Sluice reads, each declared once (settings-*.ts): config/config.ts loads them, cli/main.ts makes
// them flags and --help, and tests check docs/configuration.md and the Helm chart against them.
import type { Static } from '@sinclair/typebox'
import type { Setting } from './setting-kinds.ts'
import { CONNECTION_SETTINGS } from './settings-connections.ts'
import { PROCESS_SETTINGS } from './settings-process.ts'
import { STAGE_SETTINGS } from './settings-stages.ts'

/** In the order --help lists them. */
export const SETTING_GROUPS = [
  { title: 'The process and its HTTP listener', settings: PROCESS_SETTINGS },
  { title: 'Kafka, ClickHouse and the schema registry (distributed)', settings: CONNECTION_SETTINGS },
  { title: 'The stages', settings: STAGE_SETTINGS },
] as const

export const SETTINGS = { ...PROCESS_SETTINGS, ...CONNECTION_SETTINGS, ...STAGE_SETTINGS }

type Settings = typeof SETTINGS
export type SettingName = keyof Settings
type HasDefault<K extends SettingName> = undefined extends Settings[K]['default'] ? never : K

/** The value of every setting that has one when nothing sets it. */
export const DEFAULTS = Object.freeze(
  Object.fromEntries(
    Object.entries(SETTINGS).flatMap(([name, s]) => (s.default === undefined ? [] : [[name, s.default]])),
  ),
) as { readonly [K in SettingName as HasDefault<K>]: Static<Settings[K]['schema']> }

export const settingOf = (name: string): Setting | undefined => (SETTINGS as Record<string, Setting>)[name]

export const SECRET_SETTINGS = (Object.keys(SETTINGS) as SettingName[]).filter((name) => SETTINGS[name].secret)

/** The command-line flag, without its dashes: `--kebab-name` unless the setting names its own. */
export const flagOf = (name: SettingName): string => SETTINGS[name].flag ?? kebab(name)

/** How errors name a setting: `port (--port / SLUICE_PORT)`. */
export const settingLabel = (name: SettingName): string => `${name} (--${flagOf(name)} / ${SETTINGS[name].env})`

/** How errors name a secret's file: `kafkaPassword (--kafka-password-file / SLUICE_KAFKA_PASSWORD_FILE)`. */
export const secretFileLabel = (name: SettingName): string =>
  `${name} (--${flagOf(name)}-file / ${SETTINGS[name].env}_FILE)`

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
