// Every manifest the chart renders, with the default and the production-like values, is valid against
// the Kubernetes API schemas (and the ServiceMonitor against prometheus-operator's CRD), checked offline
// by tests/deploy/kube-validate.ts with the models of registry packages, never schemas fetched at run time.
import t from 'tap'
import { validateManifests } from './kube-validate.ts'
import { type Manifest, productionValues, template } from './helm.ts'

const list = (manifests: Manifest[]) => manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()
const perRole = (kind: string, roles: string[]) => roles.map((r) => `${kind}/rel-sluice-${r}`)
const ROLES = ['api', 'ingest', 'router', 'runner', 'sink', 'transformer']

t.test('default values: every manifest is valid', async (t) => {
  const manifests = await template({ set: ['signingKey=0123456789abcdef'] })
  const defaultRoles = ROLES.filter((r) => r !== 'runner')
  t.same(
    list(manifests),
    [
      ...perRole('Deployment', defaultRoles),
      ...perRole('PodDisruptionBudget', defaultRoles),
      'Secret/rel-sluice',
      ...perRole('Service', defaultRoles),
      // The HTTP roles' ops port (probes, /metrics) on a headless Service of its own.
      ...perRole('Service', ['api-ops', 'ingest-ops']),
      'ServiceAccount/rel-sluice',
    ].sort(),
  )
  // With an existing Secret (none rendered) and a runner too, validated in the same pass.
  const variant = await template({ set: ['existingSecret=sluice', 'roles.runner.enabled=true'] })
  t.same(await validateManifests([...manifests, ...variant]), [])
})

t.test('production-like values: every manifest is valid, the optional objects included', async (t) => {
  const manifests = await template({ values: [productionValues] })
  t.same(
    list(manifests),
    [
      ...perRole('Deployment', ROLES),
      ...perRole('HorizontalPodAutoscaler', ['api', 'ingest']),
      'Ingress/rel-sluice',
      ...perRole('PodDisruptionBudget', ROLES),
      ...perRole('Service', ROLES),
      ...perRole('Service', ['api-ops', 'ingest-ops']),
      'ServiceAccount/rel-sluice',
      'ServiceMonitor/rel-sluice',
    ].sort(),
  )
  t.same(await validateManifests(manifests), [])
})

t.test('the validator catches an unknown field, a wrong type, a bad quantity and a missing field', async (t) => {
  const manifests = await template({ values: [productionValues] })
  const find = (kind: string) => structuredClone(manifests.find((m) => m.kind === kind)) as any
  const deployment = find('Deployment')
  const container = deployment.spec.template.spec.containers[0]
  container.livenessProbe.httpGet.portt = 8288
  container.ports[0].containerPort = '8288'
  container.resources.limits.memory = 'lots'
  const monitor = find('ServiceMonitor')
  monitor.spec.endpoints[0].scrapeInterval = '15s'
  const pdb = find('PodDisruptionBudget')
  pdb.spec.maxUnavailabel = pdb.spec.maxUnavailable
  const service = find('Service')
  delete service.spec.ports[0].port
  const unknownKind = { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } }
  const problems = (await validateManifests([deployment, monitor, pdb, service, unknownKind])).join('\n')
  t.match(problems, /Deployment\/rel-sluice-api: .*"portt".*does not exist in type 'IHTTPGetAction'/)
  t.match(problems, /Deployment\/rel-sluice-api: .*containerPort must be integer/)
  t.match(problems, /Deployment\/rel-sluice-api: .*limits\/memory must match format "quantity"/)
  t.match(problems, /ServiceMonitor\/rel-sluice: .*"scrapeInterval".*does not exist/)
  t.match(problems, /PodDisruptionBudget\/rel-sluice-api: .*"maxUnavailabel".*does not exist/)
  t.match(problems, /Service\/rel-sluice-api: .*must have required property port/)
  t.match(problems, /Deploymnet\/x: no model of apps\/v1 Deploymnet/)
})
