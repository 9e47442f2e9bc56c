// The chart's values that set a Sluice setting (templates/_helpers.tpl, "sluice.env"): how a test sets each
// to something other than its default, the Deployment it reads, what Sluice gets, and why the chart's
// default is not Sluice's where it is not. helm-chart-values.test.ts proves each line by rendering.
import type { SettingName } from '../../config/settings.ts'

export interface ChartValue {
  setting: SettingName
  set: string[]
  role: string
  expected: unknown
  /** Why values.yaml's default differs from the setting's; absent, the two must agree. */
  differs?: string
}

export const CHART_VALUES: Record<string, ChartValue> = {
  'roles.<role>.roles': {
    setting: 'roles',
    set: ['roles.router.roles={router,sink}'],
    role: 'router',
    expected: ['router', 'sink'],
    differs: 'one Deployment per role',
  },
  'roles.<role>.functions': {
    setting: 'functionsFile',
    set: ['roles.runner.functions=/fn/index.js'],
    role: 'runner',
    expected: '/fn/index.js',
    differs: 'where an image built FROM the Sluice image keeps its compiled functions',
  },
  listenHost: {
    setting: 'host',
    set: ['listenHost=::'],
    role: 'ingest',
    expected: '::',
    differs: 'a pod is reached through its Service and probes, not on loopback',
  },
  'ports.http': { setting: 'port', set: ['ports.http=9000'], role: 'ingest', expected: 9000 },
  'ports.ops': { setting: 'opsPort', set: ['ports.ops=9001'], role: 'sink', expected: 9001 },
  dataDir: {
    setting: 'dataDir',
    set: ['dataDir=/var/lib/sluice'],
    role: 'transformer',
    expected: '/var/lib/sluice',
    differs: 'the emptyDir the chart mounts (the root filesystem is read-only)',
  },
  'shutdown.graceMs': { setting: 'shutdownGraceMs', set: ['shutdown.graceMs=20000'], role: 'api', expected: 20000 },
  'shutdown.httpDelayMs': {
    setting: 'shutdownDelayMs',
    set: ['shutdown.httpDelayMs=7000'],
    role: 'ingest',
    expected: 7000,
    differs: 'ingest and api only: Kubernetes takes the pod out of its Services meanwhile',
  },
  logLevel: { setting: 'logLevel', set: ['logLevel=debug'], role: 'sink', expected: 'debug' },
  trustProxy: { setting: 'trustProxy', set: ['trustProxy=10.0.0.0/8'], role: 'ingest', expected: ['10.0.0.0/8'] },
  'kafka.brokers': {
    setting: 'kafkaBrokers',
    set: ['kafka.brokers=kafka:9092'],
    role: 'router',
    expected: ['kafka:9092'],
    differs: 'the chart deploys the distributed mode',
  },
  'kafka.topicPrefix': { setting: 'topicPrefix', set: ['kafka.topicPrefix=blue'], role: 'sink', expected: 'blue' },
  'kafka.partitions': {
    setting: 'partitions',
    set: ['kafka.partitions=24'],
    role: 'transformer',
    expected: 24,
    differs: 'room for more replicas of each consuming role than one machine needs',
  },
  'kafka.tls.enabled': { setting: 'kafkaTls', set: ['kafka.tls.enabled=true'], role: 'api', expected: true },
  'kafka.sasl.mechanism': {
    setting: 'kafkaSaslMechanism',
    set: ['kafka.sasl.mechanism=scram-sha-256', 'kafka.sasl.existingSecret=kafka-sasl'],
    role: 'router',
    expected: 'scram-sha-256',
  },
  'clickhouse.url': {
    setting: 'clickhouseUrl',
    set: ['clickhouse.url=https://clickhouse.example:8443'],
    role: 'api',
    expected: 'https://clickhouse.example:8443',
    differs: 'the chart deploys the distributed mode, whose sink, api and transformer need ClickHouse',
  },
  'clickhouse.database': {
    setting: 'clickhouseDatabase',
    set: ['clickhouse.database=blue'],
    role: 'sink',
    expected: 'blue',
  },
  'clickhouse.cluster.name': {
    setting: 'clickhouseCluster',
    set: ['clickhouse.cluster.name=sluice_cluster'],
    role: 'sink',
    expected: 'sluice_cluster',
  },
  'clickhouse.cluster.insertQuorum': {
    setting: 'clickhouseInsertQuorum',
    set: ['clickhouse.cluster.name=sluice_cluster', 'clickhouse.cluster.insertQuorum=3'],
    role: 'sink',
    expected: 3,
  },
  publicUrl: {
    setting: 'publicUrl',
    set: ['publicUrl=https://sluice.example.com'],
    role: 'api',
    expected: 'https://sluice.example.com',
  },
  'sso.issuer': {
    setting: 'oidcIssuer',
    set: [
      'sso.issuer=https://id.example.com',
      'sso.clientId=sluice-prod',
      'sso.existingSecret=sluice-sso',
      'publicUrl=https://sluice.example.com',
    ],
    role: 'api',
    expected: 'https://id.example.com',
  },
  'sso.clientId': {
    setting: 'oidcClientId',
    set: [
      'sso.issuer=https://id.example.com',
      'sso.clientId=sluice-prod',
      'sso.existingSecret=sluice-sso',
      'publicUrl=https://sluice.example.com',
    ],
    role: 'api',
    expected: 'sluice-prod',
  },
  'sso.roleClaim': {
    setting: 'oidcRoleClaim',
    set: [
      'sso.issuer=https://id.example.com',
      'sso.clientId=sluice-prod',
      'sso.existingSecret=sluice-sso',
      'publicUrl=https://sluice.example.com',
      'sso.roleClaim=groups_role',
    ],
    role: 'api',
    expected: 'groups_role',
  },
  'schemaRegistry.url': {
    setting: 'schemaRegistryUrl',
    set: ['schemaRegistry.url=http://registry:8081'],
    role: 'ingest',
    expected: 'http://registry:8081',
  },
}
