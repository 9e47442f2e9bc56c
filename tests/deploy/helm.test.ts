// The Helm chart, rendered by a real helm: every Deployment runs a `sluice` command line, environment
// and mounted Secrets that Sluice's own config loader accepts in the distributed mode, with the roles
// asked; probes, disruption budgets, autoscalers, Services, Ingress and ServiceMonitor fit the pods.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { serverConfig } from '../../config/server-config.ts'
import { clickhouseConnection, kafkaSecurity } from '../../server/connections.ts'
import { ROOT } from '../helpers/server.ts'
import {
  type Manifest,
  lint,
  named,
  notes,
  ofKind,
  podOf,
  productionValues,
  secretValue,
  template,
  templateError,
} from './helm.ts'

const SIGNING_KEY = 'signingKey=0123456789abcdef'
const expectedRoles: Record<string, string[]> = {
  ingest: ['ingest'],
  transformer: ['transformer', 'dedup'],
  router: ['router'],
  sink: ['sink'],
  api: ['api'],
  runner: ['runner'],
}
const roleOf = (m: Manifest) => m.metadata.labels!['app.kubernetes.io/component']
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v)

t.test('helm lint --strict passes with the default and the production-like values', async (t) => {
  t.match(await lint({ set: [SIGNING_KEY] }), /1 chart\(s\) linted, 0 chart\(s\) failed/)
  t.match(await lint({ values: [productionValues] }), /1 chart\(s\) linted, 0 chart\(s\) failed/)
})

t.test('without signingKey or existingSecret the chart does not render, and says why', async (t) => {
  t.match(await templateError({}), /signingKey or existingSecret is required/)
})

t.test('every Deployment starts a Sluice that accepts its command line, environment and mounted Secrets', async (t) => {
  for (const [values, options] of [
    ['default', { set: [SIGNING_KEY, 'roles.runner.enabled=true'] }],
    ['production-like', { values: [productionValues] }],
  ] as const) {
    const manifests = await template(options)
    const deployments = ofKind(manifests, 'Deployment')
    t.same(deployments.map(roleOf).sort(), Object.keys(expectedRoles).sort(), `${values}: a Deployment per role`)
    for (const d of deployments) {
      const role = roleOf(d)
      const at = `${values}, ${role}`
      const container = (d as any).spec.template.spec.containers[0]
      const pod = await podOf(d, manifests)
      t.teardown(() => rm(pod.dir, { recursive: true, force: true }))
      const [command, ...args] = pod.args
      const config = serverConfig(command as 'start' | 'runner', args, pod.env)
      t.same(config.roles, expectedRoles[role], `${at}: the roles it plays`)
      t.ok(config.kafkaBrokers.length > 0 && config.clickhouseUrl, `${at}: distributed (Kafka and ClickHouse)`)
      t.equal(config.host, '0.0.0.0', `${at}: reachable from its Service and probes`)
      // ingest and api answer on their HTTP port; every role has the ops port, where probes and /metrics are.
      const http = role === 'ingest' || role === 'api'
      const ports = container.ports.map((p: any) => [p.name, p.containerPort])
      const ops = ['ops', config.opsPort]
      t.same(ports, http ? [['http', config.port], ops] : [ops], `${at}: ports`)
      t.same(container.livenessProbe.httpGet, { path: '/healthz', port: 'ops' }, `${at}: liveness on ops`)
      t.same(container.readinessProbe.httpGet, { path: '/readyz', port: 'ops' }, `${at}: readiness on ops`)
      t.equal(config.metricsListener, 'ops', `${at}: /metrics off the HTTP port`)
      t.equal(config.shutdownDelayMs, http ? 5000 : 0, `${at}: endpoints removed before the listener closes`)
      t.ok(
        (d as any).spec.template.spec.terminationGracePeriodSeconds * 1000 > config.shutdownGraceMs,
        `${at}: Kubernetes waits longer than the process drains`,
      )
      const signingSecret = values === 'default' ? '0123456789abcdef' : secretValue('sluice-signing-key', 'signing-key')
      t.equal(config.signingKey, signingSecret, `${at}: the signing key from its Secret, as a file`)
      t.notOk(pod.env.SLUICE_SIGNING_KEY, `${at}: no secret in an environment variable`)
      if (values === 'production-like') checkSecureConnections(t, at, config)
    }
  }
})

function checkSecureConnections(t: Test, at: string, config: ReturnType<typeof serverConfig>) {
  const security = kafkaSecurity(config)
  t.same(
    security.tls,
    {
      ca: `${secretValue('kafka-ca', 'ca.crt')}\n`,
      cert: `${secretValue('kafka-client-tls', 'tls.crt')}\n`,
      key: `${secretValue('kafka-client-tls', 'tls.key')}\n`,
    },
    `${at}: Kafka TLS CA, client certificate and key from their Secrets`,
  )
  t.same(
    security.sasl,
    {
      mechanism: 'scram-sha-512',
      username: secretValue('kafka-sasl', 'username'),
      password: secretValue('kafka-sasl', 'password'),
    },
    `${at}: SASL user and password from their Secret`,
  )
  const clickhouse = clickhouseConnection(config)
  t.equal(clickhouse.username, secretValue('clickhouse-credentials', 'username'), `${at}: ClickHouse user`)
  t.equal(clickhouse.password, secretValue('clickhouse-credentials', 'password'), `${at}: ClickHouse password`)
  t.equal(clickhouse.caCert, `${secretValue('clickhouse-ca', 'ca.crt')}\n`, `${at}: ClickHouse CA`)
  t.equal(config.schemaRegistryUser, secretValue('schema-registry-credentials', 'api-key'), `${at}: registry user`)
  t.equal(config.schemaRegistryPassword, secretValue('schema-registry-credentials', 'api-secret'), `${at}: password`)
}

t.test('pods run as the image user, non-root, read-only, unprivileged, writing only to emptyDirs', async (t) => {
  const imageUser = Number(/^USER (\d+)/m.exec(readFileSync(`${ROOT}/Dockerfile`, 'utf8'))?.[1])
  const manifests = await template({ values: [productionValues] })
  for (const d of ofKind(manifests, 'Deployment')) {
    const pod = (d as any).spec.template.spec
    const container = pod.containers[0]
    const at = roleOf(d)
    t.match(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: imageUser,
      seccompProfile: { type: 'RuntimeDefault' },
    })
    t.match(container.securityContext, {
      runAsNonRoot: true,
      runAsUser: imageUser,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    })
    t.equal(pod.automountServiceAccountToken, false, `${at}: no Kubernetes API token`)
    const dataDir = container.env.find((e: { name: string }) => e.name === 'SLUICE_DATA_DIR').value
    const emptyDirs = pod.volumes.filter((v: any) => v.emptyDir).map((v: any) => v.name)
    const writable = container.volumeMounts.filter((m: any) => emptyDirs.includes(m.name)).map((m: any) => m.mountPath)
    t.same(writable.sort(), [dataDir, '/tmp'].sort(), `${at}: /tmp and the RocksDB data dir are emptyDirs`)
    t.ok(container.resources.requests.cpu && container.resources.requests.memory, `${at}: requests`)
    t.ok(container.resources.limits.cpu && container.resources.limits.memory, `${at}: limits`)
    const spread = pod.topologySpreadConstraints.map((c: any) => c.topologyKey)
    t.same(spread, ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'], `${at}: spread over zones and nodes`)
    for (const c of pod.topologySpreadConstraints) {
      t.ok(matches(c.labelSelector.matchLabels, (d as any).spec.template.metadata.labels), `${at}: spread by role`)
    }
  }
})

t.test('terminationGracePeriodSeconds follows shutdown.graceMs', async (t) => {
  const manifests = await template({ set: [SIGNING_KEY, 'shutdown.graceMs=40000'] })
  for (const d of ofKind(manifests, 'Deployment')) {
    const pod = (d as any).spec.template.spec
    t.equal(pod.terminationGracePeriodSeconds, 45, roleOf(d))
    t.same(
      pod.containers[0].env.find((e: any) => e.name === 'SLUICE_SHUTDOWN_GRACE_MS'),
      {
        name: 'SLUICE_SHUTDOWN_GRACE_MS',
        value: '40000',
      },
    )
  }
})

t.test('Services, disruption budgets, autoscalers, Ingress and ServiceMonitor select what they mean to', async (t) => {
  const manifests = await template({ values: [productionValues] })
  const deployments = ofKind(manifests, 'Deployment')
  const podLabels = (role: string) => (deployments.find((d) => roleOf(d) === role) as any).spec.template.metadata.labels
  for (const d of deployments) {
    const role = roleOf(d)
    const selector = (d as any).spec.selector.matchLabels
    t.ok(matches(selector, podLabels(role)), `${role}: the Deployment selects its pods`)
    for (const other of deployments.filter((o) => o !== d))
      t.notOk(matches(selector, podLabels(roleOf(other))), `${role}: and no other role's`)
    const pdb = named(manifests, 'PodDisruptionBudget', d.metadata.name) as any
    t.same(pdb?.spec.selector.matchLabels, selector, `${role}: a disruption budget over its pods`)
    const service = named(manifests, 'Service', d.metadata.name) as any
    t.same(service?.spec.selector, selector, `${role}: a Service over its pods`)
    const containerPort = (d as any).spec.template.spec.containers[0].ports[0].name
    t.same(
      service.spec.ports.map((p: any) => p.targetPort),
      [containerPort],
      `${role}: the Service's port`,
    )
    const opsService = (named(manifests, 'Service', `${d.metadata.name}-ops`) ?? service) as any
    t.same(opsService.spec.selector, selector, `${role}: its ops port behind a Service over its pods`)
  }
  t.same((named(manifests, 'PodDisruptionBudget', 'rel-sluice-runner') as any).spec.maxUnavailable, '50%')

  const hpas = ofKind(manifests, 'HorizontalPodAutoscaler') as any[]
  t.same(hpas.map((h) => h.spec.scaleTargetRef.name).sort(), ['rel-sluice-api', 'rel-sluice-ingest'])
  for (const h of hpas) {
    t.notOk((named(manifests, 'Deployment', h.spec.scaleTargetRef.name) as any).spec.replicas, 'HPA owns replicas')
  }
  const api = hpas.find((h) => h.metadata.name === 'rel-sluice-api')
  t.same(
    api.spec.metrics.map((m: any) => [m.resource.name, m.resource.target.averageUtilization]),
    [
      ['cpu', 70],
      ['memory', 80],
    ],
  )

  const ingress = ofKind(manifests, 'Ingress')[0] as any
  t.same(ingress.spec.tls, [{ secretName: 'events-example-com-tls', hosts: ['events.example.com'] }])
  t.same(ingress.spec.rules, [
    {
      host: 'events.example.com',
      http: {
        paths: [
          {
            path: '/e',
            pathType: 'Prefix',
            backend: { service: { name: 'rel-sluice-ingest', port: { name: 'http' } } },
          },
        ],
      },
    },
  ])

  const monitor = ofKind(manifests, 'ServiceMonitor')[0] as any
  t.equal(monitor.metadata.labels.release, 'kube-prometheus-stack', 'labelled for the Prometheus that selects it')
  t.same(
    monitor.spec.endpoints.map((e: any) => [e.port, e.path]),
    [['ops', '/metrics']],
    'scrapes the ops port only',
  )
  const services = ofKind(manifests, 'Service') as any[]
  const scrapedRoles = new Set<string>()
  for (const service of services) {
    t.ok(matches(monitor.spec.selector.matchLabels, service.metadata.labels), `${service.metadata.name}: selected`)
    const names = service.spec.ports.map((p: any) => p.name)
    if (names.includes('ops')) {
      t.equal(service.spec.clusterIP, 'None', `${service.metadata.name}: the ops port only on a headless Service`)
      t.same(names, ['ops'], `${service.metadata.name}: nothing else on it`)
      scrapedRoles.add(roleOf(service))
    } else t.same(names, ['http'], `${service.metadata.name}: the HTTP Service has no ops port`)
  }
  t.same(
    [...scrapedRoles].sort(),
    ofKind(manifests, 'Deployment').map(roleOf).sort(),
    'every role is scraped, on its ops port',
  )
})

t.test('existingSecret: no Secret is rendered and the pods mount the key named', async (t) => {
  const manifests = await template({ set: ['existingSecret=my-sluice', 'existingSecretKey=key'] })
  t.same(ofKind(manifests, 'Secret'), [])
  for (const d of ofKind(manifests, 'Deployment')) {
    const sources = (d as any).spec.template.spec.volumes.find((v: any) => v.name === 'secrets').projected.sources
    t.same(sources, [{ secret: { name: 'my-sluice', items: [{ key: 'key', path: 'signing-key' }] } }], roleOf(d))
  }
})

t.test('NOTES.txt says what runs, where the Event API is, and how to reach the REST API', async (t) => {
  const production = await notes({ values: [productionValues] })
  t.match(production, 'rel-sluice-ingest: ingest (replicas: 3–12, autoscaled)')
  t.match(production, 'rel-sluice-transformer: transformer, dedup (replicas: 4)')
  t.match(production, 'rel-sluice-runner: sluice runner --functions /app/functions/index.js (replicas: 2)')
  t.match(production, 'POST https://events.example.com/e/<event key or webhook id>')
  t.match(production, "get secret sluice-signing-key -o jsonpath='{.data.signing-key}'")
  t.match(production, 'The ServiceMonitor rel-sluice scrapes them every 15s.')
  const defaults = await notes({ set: [SIGNING_KEY] })
  t.match(defaults, 'port-forward service/rel-sluice-ingest 8288:8288')
  t.match(defaults, "get secret rel-sluice -o jsonpath='{.data.SLUICE_SIGNING_KEY}'")
  t.notMatch(defaults, /runner/)
})
