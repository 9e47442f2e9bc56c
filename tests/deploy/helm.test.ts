// The Helm chart, rendered by a real helm (built by tests/infra/provision.sh): it lints, refuses to
// render without a signing key, and every Deployment it renders runs a `sluice` command line and
// environment that Sluice's own config loader accepts, in the distributed mode, with the role asked.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { serverConfig } from '../../cli/main.ts'
import { ROOT } from '../helpers/server.ts'

const run = promisify(execFile)
const cache = join(ROOT, 'tests/infra/.cache')
const helmDir = readdirSync(cache).find((d) => d.startsWith('helm-'))
if (!helmDir) throw new Error('no helm in tests/infra/.cache: run bash tests/infra/provision.sh')
const helm = join(cache, helmDir, 'helm')
const chart = join(ROOT, 'deploy/helm/sluice')

interface Manifest {
  kind: string
  metadata: { name: string }
  spec?: any
  stringData?: Record<string, string>
}

async function template(...set: string[]): Promise<Manifest[]> {
  const { stdout } = await run(helm, ['template', 'rel', chart, ...set.flatMap((s) => ['--set', s])])
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest)
    .filter(Boolean)
}

t.test('helm lint passes', async (t) => {
  const { stdout } = await run(helm, ['lint', '--strict', chart, '--set', 'signingKey=0123456789abcdef'])
  t.match(stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/)
})

t.test('without signingKey or existingSecret the chart does not render, and says why', async (t) => {
  const err = await run(helm, ['template', 'rel', chart]).then(
    () => undefined,
    (e) => e,
  )
  t.match(err?.stderr, /signingKey or existingSecret is required/)
})

t.test('every role is a Deployment whose command line and environment Sluice accepts', async (t) => {
  const manifests = await template('signingKey=0123456789abcdef', 'roles.runner.replicas=1')
  const secret = manifests.find((m) => m.kind === 'Secret')
  t.equal(secret?.stringData?.SLUICE_SIGNING_KEY, '0123456789abcdef')
  const deployments = manifests.filter((m) => m.kind === 'Deployment')
  t.same(
    deployments.map((d) => d.metadata.name).sort(),
    ['api', 'ingest', 'router', 'runner', 'sink', 'transformer'].map((r) => `rel-sluice-${r}`),
  )
  const expectedRoles: Record<string, string[]> = {
    ingest: ['ingest'],
    transformer: ['transformer', 'dedup'],
    router: ['router'],
    sink: ['sink'],
    api: ['api'],
    runner: ['runner'],
  }
  for (const d of deployments) {
    const role = d.metadata.name.replace('rel-sluice-', '')
    const container = d.spec.template.spec.containers[0]
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      container.env.map((e: { name: string; value: string }) => [e.name, e.value]),
    )
    env.SLUICE_SIGNING_KEY = secret!.stringData!.SLUICE_SIGNING_KEY // envFrom the Secret
    t.same(container.envFrom, [{ secretRef: { name: 'rel-sluice' } }], `${role}: signing key from the Secret`)
    const [command, ...args] = container.args as string[]
    t.ok(command === 'start' || command === 'runner', `${role}: sluice ${command}`)
    const config = serverConfig(command as 'start' | 'runner', args, env)
    t.same(config.roles, expectedRoles[role], `${role}: the roles it plays`)
    t.ok(config.kafkaBrokers.length > 0 && config.clickhouseUrl, `${role}: distributed mode (Kafka and ClickHouse)`)
    t.equal(config.host, '0.0.0.0', `${role}: reachable from its Service and probes`)
    t.equal(config.port, container.ports[0].containerPort, `${role}: listens on the container port`)
    t.same(container.readinessProbe.httpGet, { path: '/healthz', port: 'http' }, `${role}: ready on /healthz`)
    t.same(d.spec.selector.matchLabels, { 'app.kubernetes.io/instance': 'rel', 'sluice/role': role })
    t.match(d.spec.template.metadata.labels, d.spec.selector.matchLabels, `${role}: the selector matches its pods`)
  }
  const services = manifests
    .filter((m) => m.kind === 'Service')
    .map((m) => m.metadata.name)
    .sort()
  t.same(services, ['rel-sluice-api', 'rel-sluice-ingest'], 'the HTTP roles have a Service')
})

t.test('existingSecret: no Secret is rendered and the pods read the one named', async (t) => {
  const manifests = await template('existingSecret=my-sluice')
  t.notOk(manifests.some((m) => m.kind === 'Secret'))
  for (const d of manifests.filter((m) => m.kind === 'Deployment')) {
    t.same(d.spec.template.spec.containers[0].envFrom, [{ secretRef: { name: 'my-sluice' } }], d.metadata.name)
  }
})
