// Every setting Sluice reads (config/settings.ts) can be set through the chart: the ones the chart
// wires itself (ports, data dir, roles, …) through their first-class values (chart-values.ts, proven by
// helm-chart-values.test.ts), every other one through `env` (all roles) or `roles.<role>.env` (one role).
// Proven by rendering and loading each Deployment's configuration with Sluice's own loader.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serverConfig } from '../../config/server-config.ts'
import { SETTINGS, type SettingName } from '../../config/settings.ts'
import { CHART_VALUES } from './chart-values.ts'
import { chart, type Manifest, ofKind, podOf, template, templateError } from './helm.ts'

const SIGNING_KEY = 'signingKey=0123456789abcdef'
const NAMES = Object.keys(SETTINGS) as SettingName[]
const envVarField = Object.fromEntries(NAMES.map((name) => [SETTINGS[name].env, name]))

/** The variables the chart derives from its own values and refuses in `env` (templates/_helpers.tpl). */
const helpers = readFileSync(`${chart}/templates/_helpers.tpl`, 'utf8')
const reservedList = /define "sluice.reservedEnv".*\n\{\{- list (.*) \| toJson/.exec(helpers)?.[1] ?? ''
const reserved = [...reservedList.matchAll(/"([A-Z_]+)"/g)].map((m) => m[1])

/** The settings the chart sets from a value of its own. */
const FIRST_CLASS = new Set(Object.values(CHART_VALUES).map((v) => v.setting))

/** A valid value of a setting that is not its default, as a values file would hold it (typed). */
function sample(name: SettingName): unknown {
  const schema = SETTINGS[name].schema as any
  const fallback = SETTINGS[name].default
  const literals: string[] = (schema.anyOf ?? []).map((s: any) => s.const).filter((v: unknown) => v !== undefined)
  if (literals.length > 0) return literals.find((l) => l !== fallback)
  switch (schema.type) {
    case 'integer': {
      const next = typeof fallback === 'number' ? fallback + 1 : schema.minimum
      return next <= (schema.maximum ?? Number.MAX_SAFE_INTEGER) ? next : schema.minimum
    }
    case 'boolean':
      return !fallback
    case 'array':
      return 'first.example,second.example'
    default:
      return 'sample_value_0123456789'
  }
}
const parsed = (name: SettingName, value: unknown) => SETTINGS[name].parse(String(value))

const configOf = async (t: Test, d: Manifest, manifests: Manifest[]) => {
  const pod = await podOf(d, manifests)
  t.teardown(() => rm(pod.dir, { recursive: true, force: true }))
  const [command, ...args] = pod.args
  return { config: serverConfig(command as 'start' | 'runner', args, pod.env) as Record<string, unknown>, pod }
}
const roleOf = (m: Manifest) => m.metadata.labels!['app.kubernetes.io/component']

t.test('the settings the chart wires itself have a first-class value, and are refused in env', async (t) => {
  t.ok(reserved.length > 0, 'the reserved list is found in _helpers.tpl')
  t.same(
    reserved.filter((envVar) => !FIRST_CLASS.has(envVarField[envVar])),
    [],
    'reserved variables without a value of their own',
  )
  for (const envVar of reserved) {
    const error = await templateError({ set: [SIGNING_KEY, `env.${envVar}=1`] })
    t.match(error, `env.${envVar}: set by the chart`, `${envVar} in env is refused, with the value to use`)
  }
})

/** Settings of the embedded mode that the distributed one refuses rather than ignores (config/config.ts). */
const EMBEDDED_ONLY: Record<string, { envVar: string; value: string; refusal: RegExp }> = {
  // Deleting events by age is ClickHouse's TTL or DROP PARTITION there: an operator who set it
  // must not believe events are deleted when they are not.
  eventRetentionMs: { envVar: 'SLUICE_EVENT_RETENTION_MS', value: '86400000', refusal: /embedded mode only/ },
}

t.test('a setting only the embedded mode takes is refused through the chart, saying why', async (t) => {
  for (const { envVar, value, refusal } of Object.values(EMBEDDED_ONLY)) {
    const manifests = await template({ set: [SIGNING_KEY, 'roles.runner.enabled=true', `env.${envVar}=${value}`] })
    for (const d of ofKind(manifests, 'Deployment'))
      await t.rejects(
        configOf(t, d, manifests),
        { code: 'CONFIG_INVALID', message: refusal },
        `${roleOf(d)}: ${envVar}`,
      )
  }
})

t.test('every other setting can be set through env for all roles, and per role', async (t) => {
  const names = NAMES.filter((name) => !reserved.includes(SETTINGS[name].env) && !EMBEDDED_ONLY[name])
  const env = Object.fromEntries(names.map((name) => [SETTINGS[name].env, sample(name)]))
  const dir = await mkdtemp(join(tmpdir(), 'sluice-values-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const values = join(dir, 'values.json')
  await writeFile(
    values,
    JSON.stringify({
      signingKey: '0123456789abcdef',
      env,
      roles: { runner: { enabled: true }, sink: { env: { SLUICE_LOG_LEVEL: 'trace' } } },
    }),
  )
  const manifests = await template({ values: [values] })
  const deployments = ofKind(manifests, 'Deployment')
  t.equal(deployments.length, 6)
  for (const d of deployments) {
    const role = roleOf(d)
    const { config, pod } = await configOf(t, d, manifests)
    for (const name of names) {
      const envVar = SETTINGS[name].env
      const value = name === 'logLevel' && role === 'sink' ? 'trace' : env[envVar]
      // Numbers as written, never in exponent notation (helm reads YAML numbers as floats).
      t.equal(pod.env[envVar], String(value), `${role}: ${envVar} rendered`)
      t.same(config[name], parsed(name, value), `${role}: ${name} from ${envVar}`)
    }
  }
})
