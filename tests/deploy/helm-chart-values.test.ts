// The chart against the table of settings (config/settings.ts): each chart value that sets a setting
// (chart-values.ts) reaches Sluice as that setting, states Sluice's default or says why not, and admits
// only what Sluice accepts (values.schema.json); every variable the chart renders is a setting.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { isDeepStrictEqual } from 'node:util'
import { parse } from 'yaml'
import { serverConfig } from '../../config/server-config.ts'
import { SETTINGS, SECRET_SETTINGS, type SettingName } from '../../config/settings.ts'
import { CHART_VALUES } from './chart-values.ts'
import { chart, type Manifest, ofKind, podOf, productionValues, template } from './helm.ts'

const SIGNING_KEY = 'signingKey=0123456789abcdef'
const values = parse(readFileSync(`${chart}/values.yaml`, 'utf8'))
const schema = JSON.parse(readFileSync(`${chart}/values.schema.json`, 'utf8'))
const roleOf = (m: Manifest) => m.metadata.labels!['app.kubernetes.io/component']
const entries = Object.entries(CHART_VALUES)

const configOf = async (t: Test, d: Manifest, manifests: Manifest[]) => {
  const pod = await podOf(d, manifests)
  t.teardown(() => rm(pod.dir, { recursive: true, force: true }))
  const [command, ...args] = pod.args
  return { config: serverConfig(command as 'start' | 'runner', args, pod.env) as Record<string, unknown>, pod }
}

const dig = (from: any, keys: string[]) => keys.reduce((at, key) => at?.[key], from)

/** values.yaml's default at a path; `roles.<role>.x`: each role's that has one. */
function defaultsAt(path: string): unknown[] {
  const [head, role, ...rest] = path.split('.')
  if (head === 'roles' && role === '<role>')
    return Object.values(values.roles)
      .map((spec) => dig(spec, rest))
      .filter((v) => v !== undefined)
  return [dig(values, path.split('.'))]
}

/** What Sluice makes of a chart value: its text in the variable; empty, the variable is not set. */
function asSluiceReads(name: SettingName, value: unknown): unknown {
  const text = Array.isArray(value) ? value.join(',') : String(value)
  return text === '' ? SETTINGS[name].default : SETTINGS[name].parse(text)
}

const resolve = (node: any) => (node?.$ref ? schema.definitions[node.$ref.split('/').pop()] : node)
/** values.schema.json's rule for a path (`<role>`: any role). */
const schemaAt = (path: string): any =>
  path
    .split('.')
    .reduce(
      (node, key) => resolve(key === '<role>' ? resolve(node).additionalProperties : resolve(node).properties[key]),
      schema,
    )

t.test('each chart value reaches Sluice as its setting', async (t) => {
  const manifests = await template({
    set: [SIGNING_KEY, 'roles.runner.enabled=true', ...entries.flatMap(([, v]) => v.set)],
  })
  const deployments = ofKind(manifests, 'Deployment')
  for (const [path, { setting, role, expected }] of entries) {
    const { config } = await configOf(t, deployments.find((d) => roleOf(d) === role)!, manifests)
    t.same(config[setting], expected, `${path} is ${setting} on ${role}`)
  }
})

t.test("each chart value's default is Sluice's, or the chart says why not", async (t) => {
  for (const [path, { setting, differs }] of entries) {
    const defaults = defaultsAt(path)
    t.ok(defaults.length > 0, `${path} is in values.yaml`)
    const agree = defaults.every((v) => isDeepStrictEqual(asSluiceReads(setting, v), SETTINGS[setting].default))
    if (differs) t.notOk(agree, `${path}: not ${setting}'s default, on purpose: ${differs}`)
    else t.ok(agree, `${path}: ${JSON.stringify(defaults)}, ${setting}'s default`)
  }
})

t.test('values.schema.json admits only what Sluice accepts of each chart value', async (t) => {
  for (const [path, { setting }] of entries) {
    const rule = schemaAt(path)
    t.ok(rule, `${path}: values.schema.json has a rule`)
    const own = SETTINGS[setting].schema as any
    const [chartItem, item] = own.type === 'array' ? [resolve(rule.items), own.items] : [rule, own]
    if (item.type === 'integer') {
      t.ok(chartItem.minimum >= item.minimum, `${path}: minimum ${chartItem.minimum} within ${item.minimum}`)
      t.ok(chartItem.maximum <= item.maximum, `${path}: maximum ${chartItem.maximum} within ${item.maximum}`)
    }
    if (item.anyOf) {
      // '' leaves the setting unset.
      const choices = item.anyOf.map((l: { const: string }) => l.const)
      t.ok(chartItem.enum, `${path}: an enum`)
      t.same(
        (chartItem.enum ?? []).filter((v: string) => v !== '' && !choices.includes(v)),
        [],
        `${path}: choices`,
      )
    }
    if (item.pattern) t.equal(chartItem.pattern, item.pattern, `${path}: the pattern`)
    if (item.type === 'boolean') t.equal(chartItem.type, 'boolean', `${path}: a boolean`)
  }
})

const variables = new Map(
  (Object.keys(SETTINGS) as SettingName[]).flatMap((n) => [
    [SETTINGS[n].env, n],
    ...(SECRET_SETTINGS.includes(n) ? [[`${SETTINGS[n].env}_FILE`, n] as const] : []),
  ]),
)
/** Settings the chart sets from Secrets it is given (files it mounts, user names), not from a value of its own. */
const FROM_SECRETS: SettingName[] = [
  ...SECRET_SETTINGS,
  'kafkaCaFile',
  'kafkaCertFile',
  'kafkaKeyFile',
  'kafkaUsername',
  'clickhouseUser',
  'clickhouseCaFile',
  'schemaRegistryUser',
]

t.test('every variable the chart renders is a setting, set by a value listed in chart-values.ts', async (t) => {
  const valued = new Set(entries.map(([, v]) => v.setting))
  for (const [at, options] of [
    ['default', { set: [SIGNING_KEY, 'roles.runner.enabled=true'] }],
    ['production-like', { values: [productionValues] }],
  ] as const) {
    const manifests = await template(options)
    const production = parse(readFileSync(productionValues, 'utf8'))
    const givenEnv =
      at === 'default' ? [] : [production.env, ...Object.values(production.roles ?? {}).map((r: any) => r.env)]
    const given = new Set(givenEnv.flatMap((env) => Object.keys(env ?? {})))
    for (const d of ofKind(manifests, 'Deployment')) {
      const names: string[] = (d as any).spec.template.spec.containers[0].env.map((e: { name: string }) => e.name)
      t.same(
        names.filter((name) => !variables.has(name)),
        [],
        `${at}, ${roleOf(d)}: no variable that is not a setting`,
      )
      const unlisted = names
        .filter((name) => !given.has(name))
        .map((name) => variables.get(name)!)
        .filter((name) => name && !valued.has(name) && !FROM_SECRETS.includes(name))
      t.same(unlisted, [], `${at}, ${roleOf(d)}: every setting the chart sets has its line in chart-values.ts`)
    }
  }
})
