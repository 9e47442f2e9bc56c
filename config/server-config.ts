// The configuration `sluice dev|start|runner <args>` runs with: every setting is a flag (docs/configuration.md).
import { parseArgs } from 'node:util'
import { checkRunnerConfig, loadConfig, runnerConfig, type Config, type Flags } from './config.ts'
import type { Setting } from './setting-kinds.ts'
import { SECRET_SETTINGS, SETTINGS, type SettingName, flagOf } from './settings.ts'

const NAMES = Object.keys(SETTINGS) as SettingName[]

type FlagOption = { type: 'string' | 'boolean'; multiple?: boolean; short?: string }
/** One-letter forms, as Inngest's dev server takes them (`-u URL`). */
const SHORT: Record<string, string> = { 'sdk-url': 'u' }
/**
 * Every setting is a flag; secrets also as --x-file. A setting off by default is a switch (`--watch`); one on by
 * default takes a value, so it can be turned off (`--local-log-share-values false`). A list may be repeated.
 */
function flagOption(setting: Setting): FlagOption {
  if (setting.default === false) return { type: 'boolean' }
  return setting.schema.type === 'array' ? { type: 'string', multiple: true } : { type: 'string' }
}
const SERVER_OPTIONS: Record<string, FlagOption> = Object.fromEntries([
  ...NAMES.map((name) => {
    const flag = flagOf(name)
    return [flag, { ...flagOption(SETTINGS[name]), ...(SHORT[flag] && { short: SHORT[flag] }) }]
  }),
  ...SECRET_SETTINGS.map((name) => [`${flagOf(name)}-file`, { type: 'string' }]),
])

/** The configuration `sluice dev|start|runner <args>` runs with (the chart's tests check Deployments by it). */
export function serverConfig(command: 'dev' | 'start' | 'runner', args: string[], env?: NodeJS.ProcessEnv): Config {
  const { values } = parseArgs({ args, options: SERVER_OPTIONS, strict: true })
  const flags: Flags = {}
  for (const name of NAMES) {
    const value = values[flagOf(name)]
    flags[name] = Array.isArray(value) ? value.join(',') : value
  }
  for (const name of SECRET_SETTINGS) flags[`${name}File`] = values[`${flagOf(name)}-file`] as string | undefined
  const config = loadConfig(command === 'runner' ? 'start' : command, flags, env)
  if (command !== 'runner') return config
  checkRunnerConfig(config, false)
  return runnerConfig(config)
}
