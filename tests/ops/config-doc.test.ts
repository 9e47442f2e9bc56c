// docs/configuration.md has one row per setting of the table (config/settings.ts), with its flag, environment
// variables, default and range as declared there, and no row without a setting.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ConfigSchema } from '../../config/config.ts'
import { rangeOf, shownDefault } from '../../config/setting-kinds.ts'
import { SETTINGS, type SettingName, flagOf } from '../../config/settings.ts'

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
const rows = [...doc.matchAll(/^\| `--([a-z-]+)` \| (.+?) \| (.+?) \| (.+?) \| (.*) \|$/gm)].map((m) => ({
  flag: m[1],
  envVars: [...m[2].matchAll(/`([A-Z_]+)`/g)].map((e) => e[1]),
  defaultValue: m[3],
  range: m[4].replace(/^`(.*)`$/, '$1'),
  meaning: m[5].trim(),
}))
const names = Object.keys(SETTINGS) as SettingName[]

t.test('the schema config.ts loads with is the table, and a command (mode)', async (t) => {
  t.same(Object.keys(ConfigSchema.properties).sort(), [...names, 'mode'].sort())
})

t.test(
  'every setting has one row with its flag, variables, default, range and meaning; no row without one',
  async (t) => {
    t.ok(rows.length > 50, 'the table is found')
    t.same(rows.map((r) => r.flag).sort(), names.map(flagOf).sort())
    for (const name of names) {
      const row = rows.find((r) => r.flag === flagOf(name))
      if (!row) continue
      const { env, secret } = SETTINGS[name]
      t.same(row.envVars, secret ? [env, `${env}_FILE`] : [env], `${name}: variables`)
      t.equal(row.defaultValue, shownDefault(SETTINGS[name]) || '—', `${name}: default`)
      t.equal(row.range, rangeOf(SETTINGS[name]) || '—', `${name}: range`)
      t.equal(row.meaning.startsWith('*Secret.*'), secret === true, `${name}: marked secret or not`)
      t.ok(row.meaning.length > 10, `${name}: says what it does`)
    }
  },
)

t.test('flags and variables are named alike, and no two settings share one', async (t) => {
  const envs = names.map((name) => SETTINGS[name].env)
  const flags = names.map(flagOf)
  t.equal(new Set(envs).size, names.length, 'variables are unique')
  t.equal(new Set(flags).size, names.length, 'flags are unique')
  for (const name of names) t.match(SETTINGS[name].env, /^SLUICE_[A-Z0-9_]+$/, `${name}: SLUICE_ and upper case`)
  for (const name of names) t.match(flagOf(name), /^[a-z][a-z0-9-]*$/, `${name}: a kebab-case flag`)
})

t.test('the README links the table and names the settings operators looked for', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  t.match(readme, /docs\/configuration\.md/)
  t.match(doc, /SLUICE_TOPIC_PREFIX/)
  t.match(doc, /SLUICE_CLICKHOUSE_DATABASE/)
})
