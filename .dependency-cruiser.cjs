// Dependency rules, checked by `npm run depcruise` in tests/run.sh. The layering they keep:
// client/ is a library (it must not reach into the app); the stages talk to each other only
// through core/ or a declared interface (a *types.ts module); each vendor client stays in its adapter.
const STAGES = 'ingest|transformer|router|runner|dedup|store'
const PROJECT = '^(api|bus|cli|client|control|core|dedup|ingest|router|runner|store|transformer)/'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle makes start order and module state depend on which file loads first.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'client-is-a-library',
      severity: 'error',
      comment: 'client/ is published as sluice/client: it imports nothing of the app but core/.',
      from: { path: '^client/' },
      to: { path: PROJECT, pathNot: '^(client|core)/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment:
        'An import the checker cannot resolve is one it cannot check. The one exception is sluice/server: ' +
        "the package's own public entry point (package.json exports), through which client/runner.ts " +
        'starts a server without a path into cli/. And @platformatic/kafka, which names its entry only in ' +
        "package.json exports (no main), which this checker's resolver does not read.",
      from: {},
      to: { couldNotResolve: true, pathNot: ['^sluice/server$', '^@platformatic/kafka$'] },
    },
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'core/ is what every part shares: at run time it imports nothing of the app (types only).',
      from: { path: '^core/' },
      to: { path: PROJECT, pathNot: '^core/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'stages-meet-through-interfaces',
      severity: 'error',
      comment: "A stage imports another stage only through core/ or that stage's declared interface (*types.ts).",
      from: { path: `^(${STAGES})/` },
      to: { path: `^(${STAGES})/`, pathNot: ['^$1/', '(^|/|-)types\\.ts$'] },
    },
    {
      name: 'kafkajs-only-in-its-adapter',
      severity: 'error',
      comment: 'Only the kafkajs adapter (bus/kafka-kafkajs*) talks to kafkajs; the Kafka core sees its port.',
      from: { pathNot: '^bus/kafka-kafkajs' },
      to: { path: 'node_modules/kafkajs/' },
    },
    {
      name: 'platformatic-kafka-only-in-its-adapter',
      severity: 'error',
      comment: 'Only the @platformatic/kafka adapter (bus/kafka-platformatic*) talks to it; the core sees its port.',
      from: { pathNot: '^bus/kafka-platformatic' },
      to: { path: '(^|node_modules/)@platformatic/kafka($|/)' },
    },
    {
      name: 'clickhouse-only-in-the-clickhouse-store',
      severity: 'error',
      comment: 'Only the ClickHouse store adapter (store/clickhouse*) talks to @clickhouse/client.',
      from: { pathNot: '^store/clickhouse' },
      to: { path: 'node_modules/@clickhouse/client' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.d\\.ts$' },
  },
}
