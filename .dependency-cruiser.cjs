// Dependency rules, checked by `npm run depcruise` in tests/run.sh. The layering they keep:
// client/ is a library (it must not reach into the app); the stages talk to each other only
// through core/ or a declared interface (a *types.ts module); each vendor client stays in its adapter.
const STAGES = 'ingest|transformer|router|runner|dedup|store'
const PROJECT =
  '^(api|bus|cli|client|config|control|core|dedup|ingest|one-pass|router|runner|sdk|server|store|transformer)/'

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
      name: 'commands-load-no-server',
      severity: 'error',
      comment:
        'cli/ holds the commands: --help and the control commands load only the settings table and the REST ' +
        'client; a server command loads the server (server/) by a dynamic import, when it runs.',
      from: { path: '^cli/' },
      to: { path: PROJECT, pathNot: '^(cli|config|core)/', dependencyTypesNot: ['type-only', 'dynamic-import'] },
    },
    {
      name: 'config-is-the-settings',
      severity: 'error',
      comment: 'config/ declares and loads the settings: it imports core/ alone, never a stage or an adapter.',
      from: { path: '^config/' },
      to: { path: PROJECT, pathNot: '^(config|core)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'composition-roots-are-on-top',
      severity: 'error',
      comment: 'server/ wires the stages: nothing below it imports it, so a stage never reaches its composition.',
      from: { path: PROJECT, pathNot: '^(server|cli)/' },
      to: { path: '^server/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import the checker cannot resolve is one it cannot check.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'core/ is what every part shares, the function and flow model too: it imports nothing above it.',
      from: { path: '^core/' },
      to: { path: PROJECT, pathNot: '^core/' },
    },
    {
      name: 'only-the-runner-wiring-imports-client',
      severity: 'error',
      comment:
        'client/ is the library users write functions with: only what loads and runs their handlers imports it ' +
        '(the runner stage, its functions file and in-process executor, server/), and sdk/, which checks an ' +
        "app's functions by the client's own checks. The rest takes a FunctionSpec (core/function.ts).",
      from: {
        path: PROJECT,
        pathNot: ['^(client|server|sdk)/', '^runner/(index|functions-file|executor)\\.ts$'],
      },
      to: { path: '^client/' },
    },
    {
      name: 'api-imports-no-runner',
      severity: 'error',
      comment:
        'The REST API publishes cancels and retries through core/ (run-cancel.ts, run-retry.ts), not the runner.',
      from: { path: '^api/' },
      to: { path: '^runner/' },
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
      from: { path: PROJECT, pathNot: '^bus/kafka-kafkajs' },
      to: { path: 'node_modules/kafkajs/' },
    },
    {
      name: 'platformatic-kafka-only-in-its-adapter',
      severity: 'error',
      comment: 'Only the @platformatic/kafka adapter (bus/kafka-platformatic*) talks to it; the core sees its port.',
      from: { path: PROJECT, pathNot: '^bus/kafka-platformatic' },
      to: { path: 'node_modules/@platformatic/kafka/' },
    },
    {
      name: 'the-local-log-only-in-the-embedded-root',
      severity: 'error',
      comment:
        "Only server/embedded.ts asks for the local log's capabilities (shared values, settle): others see a Bus.",
      from: { path: PROJECT, pathNot: ['^bus/(local|record-batch)', '^server/embedded.ts$'] },
      to: { path: '^bus/(local|record-batch)' },
    },
    {
      name: 'clickhouse-only-in-the-clickhouse-store',
      severity: 'error',
      comment: 'Only the ClickHouse store adapter (store/clickhouse*) talks to @clickhouse/client.',
      from: { path: PROJECT, pathNot: '^store/clickhouse' },
      to: { path: 'node_modules/@clickhouse/client' },
    },
    {
      name: 'the-dashboard-only-calls-the-api',
      severity: 'error',
      comment: 'dashboard/src runs in the browser and talks to the REST API only: it imports nothing of the server.',
      from: { path: '^dashboard/' },
      to: { path: PROJECT },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages that name their entry points only in package.json exports (@platformatic/kafka), and this
    // package's own entries (sluice/client, sluice/server) by the condition a checkout runs them with.
    // The dashboard's build (scripts/build-dashboard.ts) serves docs/clickhouse.md's queries as this module.
    builtInModules: { add: ['sluice:clickhouse-examples'] },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['sluice-source', 'import', 'node', 'default'],
      extensions: ['.ts', '.js', '.json'],
    },
    // Provisioned tools (tests/infra/.cache: SDK sources, Go modules) are not the project's code.
    exclude: { path: ['\\.d\\.ts$', '(^|/)tests/infra/\\.cache/'] },
  },
}
