// What the code, the docs and the Helm chart call a setting is what the table (config/settings.ts) declares:
// every SLUICE_ variable they name exists, and every error hint `name (--flag / SLUICE_X)` is the setting's own.
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { SETTINGS, type SettingName, secretFileLabel, settingLabel } from '../../config/settings.ts'
import { ROOT } from '../helpers/server.ts'
import { SOURCE_DIRS } from '../../scripts/warm-compile-cache.ts'

const SOURCES = [...SOURCE_DIRS, ...['docs', 'deploy/helm/sluice', 'scripts', 'README.md', 'Dockerfile']]
/** Variables that are not settings of the server: read before node starts, by the control commands, or examples. */
const NOT_SETTINGS: Record<string, string> = {
  SLUICE_URL: 'where the control commands (cli/control.ts) find the server',
  SLUICE_TOKEN: 'the API token a control command sends (config/api-target.ts)',
  SLUICE_MALLOC: 'the allocator scripts/start.sh preloads before node starts',
  SLUICE_X: 'a placeholder in prose',
  SLUICE_X_FILE: 'a placeholder in prose',
  SLUICE_VAR: 'a placeholder in prose',
}

function files(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).flatMap((entry) => files(join(path, entry)))
}
const texts = SOURCES.flatMap((s) => files(join(ROOT, s))).map((path) => ({
  at: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}))
const names = Object.keys(SETTINGS) as SettingName[]
const variables = new Set(
  names.flatMap((n) => [SETTINGS[n].env, ...(SETTINGS[n].secret ? [`${SETTINGS[n].env}_FILE`] : [])]),
)

t.test('every SLUICE_ variable named in the code, docs and chart is a setting (or its file)', async (t) => {
  t.ok(texts.length > 100, 'the files are read')
  const unknown = texts.flatMap(({ at, text }) =>
    [...text.matchAll(/SLUICE_[A-Z0-9_]+/g)]
      .map((m) => m[0])
      .filter((v) => !variables.has(v) && !NOT_SETTINGS[v])
      .map((v) => `${at}: ${v}`),
  )
  t.same(unknown, [])
})

t.test('every `name (--flag / SLUICE_X)` hint is the setting as the table names it', async (t) => {
  const hints = texts.flatMap(({ at, text }) =>
    [...text.matchAll(/\b([a-z][A-Za-z]*) \(--[a-z-]+ \/ (SLUICE_[A-Z0-9_]+)\)/g)]
      .filter((m) => !NOT_SETTINGS[m[2]])
      .map((m) => ({ at, hint: m[0], name: m[1] })),
  )
  t.ok(hints.length > 10, 'hints are found')
  const wrong = hints.filter(({ name, hint }) => {
    if (!(name in SETTINGS)) return true
    return hint !== settingLabel(name as SettingName) && hint !== secretFileLabel(name as SettingName)
  })
  t.same(
    wrong.map(({ at, hint }) => `${at}: ${hint}`),
    [],
  )
})

t.test('no hint names a setting by its variable alone', async (t) => {
  const bare = texts.flatMap(({ at, text }) =>
    [...text.matchAll(/\b([a-z][A-Za-z]*) \((SLUICE_[A-Z0-9_]+)\)/g)]
      .filter((m) => m[1] in SETTINGS)
      .map((m) => `${at}: ${m[0]}`),
  )
  t.same(bare, [], 'errors name the flag and the variable')
})
