// docs/configuration.md has one row per setting of the configuration schema, with its flag,
// environment variable and default as cli/config.ts defines them, and no row without a setting.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ConfigSchema, DEFAULTS, SECRET_FIELDS, SOURCES, flagName } from '../../cli/config.ts'

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
const rows = [...doc.matchAll(/^\| `--([a-z-]+)` \| (.+?) \| (.+?) \| (.*) \|$/gm)].map((m) => ({
  flag: m[1],
  envVars: [...m[2].matchAll(/`([A-Z_]+)`/g)].map((e) => e[1]),
  defaultValue: m[3],
  meaning: m[4].trim(),
}))

// `mode` is the command (dev, start, runner), not a setting.
const settings = Object.keys(ConfigSchema.properties).filter((field) => field !== 'mode')

function shown(value: unknown): string {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return '—'
  return Array.isArray(value) ? value.join(',') : String(value)
}

t.test('every setting of the schema has a flag and an environment variable', async (t) => {
  t.same(
    settings.filter((field) => !SOURCES[field]),
    [],
    'settings without a flag and variable',
  )
})

t.test(
  'every setting has one row with its flag, variable, default and meaning; no row without a setting',
  async (t) => {
    t.same(rows.map((r) => r.flag).sort(), settings.map(flagName).sort())
    for (const field of settings) {
      const row = rows.find((r) => r.flag === flagName(field))
      if (!row) continue
      const envVar = SOURCES[field][0]
      const secret = (SECRET_FIELDS as readonly string[]).includes(field)
      t.same(row.envVars, secret ? [envVar, `${envVar}_FILE`] : [envVar], `${field}: variables`)
      t.equal(row.defaultValue, shown((DEFAULTS as Record<string, unknown>)[field]), `${field}: default`)
      t.ok(row.meaning.length > 10, `${field}: says what it does`)
    }
  },
)

t.test('the README links the table and names the settings operators looked for', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  t.match(readme, /docs\/configuration\.md/)
  t.match(doc, /SLUICE_TOPIC_PREFIX/)
  t.match(doc, /SLUICE_CLICKHOUSE_DATABASE/)
})
