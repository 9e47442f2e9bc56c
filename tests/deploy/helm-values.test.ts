// The chart's values: values.schema.json refuses wrong ones when helm renders (`helm install` and
// `helm upgrade` run the same check, before anything is applied to the cluster), the
// templates refuse combinations that cannot work, and the chart README documents every value.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { chart, templateError } from './helm.ts'

const SIGNING_KEY = 'signingKey=0123456789abcdef'
const schemaError = /values don't meet the specifications of the schema/

t.test('values.schema.json: a wrong value fails at template time, naming it', async (t) => {
  const cases: [string, RegExp][] = [
    ['roles.ingest.replicas=-1', /at '\/roles\/ingest\/replicas': minimum: got -1, want 0/],
    ['roles.ingest.replicas=two', /at '\/roles\/ingest\/replicas': got string, want integer/],
    ['roles.ingest.replicaCount=3', /at '\/roles\/ingest': additional properties 'replicaCount' not allowed/],
    ['kafka.brokerList=kafka:9092', /at '\/kafka': additional properties 'brokerList' not allowed/],
    ['imageTag=1.0', /at '': additional properties 'imageTag' not allowed/],
    ['kafka.sasl.mechanism=scram', /at '\/kafka\/sasl\/mechanism': value must be one of/],
    ['kafka.partitions=0', /at '\/kafka\/partitions': minimum: got 0, want 1/],
    ['ports.http=70000', /at '\/ports\/http': maximum: got 70,?000, want 65,?535/],
    ['roles.sink.roles={sink,loader}', /at '\/roles\/sink\/roles\/1': value must be one of/],
    ['roles.api.resources.limits.memory=lots', /at '\/roles\/api\/resources\/limits\/memory'/],
    ['roles.api.pdb.maxUnavailable=half', /at '\/roles\/api\/pdb\/maxUnavailable'/],
    ['clickhouse.url=clickhouse:8123', /at '\/clickhouse\/url': 'clickhouse:8123' does not match pattern/],
    ['shutdown.graceMs=500', /at '\/shutdown\/graceMs': minimum: got 500, want 1,?000/],
    ['serviceMonitor.interval=often', /at '\/serviceMonitor\/interval'/],
    ['env.sluice-port=1', /invalid propertyName 'sluice-port'/],
  ]
  for (const [set, expected] of cases) {
    const error = await templateError({ set: [SIGNING_KEY, set] })
    t.match(error, schemaError, `${set}: refused by the schema`)
    t.match(error, expected, `${set}: says where`)
  }
})

t.test('a signing key under 16 characters is refused without being printed', async (t) => {
  const error = await templateError({ set: ['signingKey=short-secret'] })
  t.match(error, /at '\/signingKey': .*minLength: got 12, want 16/s)
  t.notMatch(error, /short-secret/)
})

t.test('the templates refuse combinations that cannot work, naming the value to change', async (t) => {
  const cases: [string[], RegExp][] = [
    [['env.SLUICE_PORT=9000'], /env\.SLUICE_PORT: set by the chart .*; set that value instead/],
    [['roles.sink.env.SLUICE_DATA_DIR=/x'], /roles\.sink\.env\.SLUICE_DATA_DIR: set by the chart/],
    [['roles.sink.autoscaling.enabled=true'], /roles\.sink\.autoscaling: only the HTTP roles \(ingest, api\)/],
    [['kafka.sasl.mechanism=plain'], /kafka\.sasl\.existingSecret: SASL needs a Secret/],
    [['ingress.enabled=true', 'roles.ingest.enabled=false'], /ingress\.enabled: .* ingest role, which is not enabled/],
  ]
  for (const [set, expected] of cases)
    t.match(await templateError({ set: [SIGNING_KEY, ...set] }), expected, set.join())
})

// The rows of the README's "Values" table: | `key` | type | default | description |
const readme = readFileSync(`${chart}/README.md`, 'utf8')
const valuesSection = readme.split(/^## Values$/m)[1]?.split(/^## /m)[0] ?? ''
const rows = [...valuesSection.matchAll(/^\| `([^`]+)` \| ([^|]+) \| (.*) \|$/gm)].map((m) => ({
  key: m[1],
  type: m[2].trim(),
}))

/** Every leaf of values.yaml (an empty map or a list is a leaf), roles' own keys as `roles.<role>.…`. */
function leaves(value: unknown, path = ''): string[] {
  if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, v]) => leaves(v, path ? `${path}.${key}` : key))
  }
  return [path.replace(/^roles\.[^.]+\./, 'roles.<role>.')]
}

t.test('the chart README documents every value of values.yaml, and no value that is not there', async (t) => {
  const values = [...new Set(leaves(parse(readFileSync(`${chart}/values.yaml`, 'utf8'))))]
  t.ok(rows.length > 50, 'the table is found')
  const documented = (leaf: string) =>
    rows.some((r) => r.key === leaf || (r.type === 'object' && leaf.startsWith(`${r.key}.`)))
  t.same(
    values.filter((leaf) => !documented(leaf)),
    [],
    'values without a row',
  )
  t.same(
    rows.filter((r) => !values.some((leaf) => leaf === r.key || leaf.startsWith(`${r.key}.`))).map((r) => r.key),
    [],
    'rows without a value',
  )
})
