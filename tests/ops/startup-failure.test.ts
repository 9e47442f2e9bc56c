// A role that cannot start exits non-zero at once (Kubernetes and systemd restart only a process
// that exits): a busy port, a busy data dir, a data dir of another data format, a busy ops port.
import t from 'tap'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { DATA_FORMAT, READABLE_FORMATS } from '../../core/data-format.ts'
import { keyPrefix } from '../../core/keyspaces.ts'
import { openRocks } from '../../core/rocks.ts'
import { tempDir, removeDir, spawnServer, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { distributedEnv } from '../distributed/cluster.ts'
import { spawnSluice } from './sluice-process.ts'

t.setTimeout(180_000)
// On a shared 2-core machine starting Node alone can take seconds: the bound is 2 s beyond what
// `sluice start --help` (node, TypeScript sources, the CLI) takes beside it, started at the same moment.
const dataDir = await tempDir()
const running = await spawnServer(['start', '--port', '0', '--data-dir', dataDir], {
  SLUICE_SIGNING_KEY: TEST_SIGNING_KEY,
})
// As a build of another data format would leave it.
const otherFormatDir = await tempDir()
const other = await openRocks(join(otherFormatDir, 'db'), rocksOptionsOf(DEFAULTS))
await other.write([{ type: 'put', key: keyPrefix('dataFormat'), value: String(DATA_FORMAT + 1) }])
await other.close()
const blocker = createServer()
await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
const blockedPort = String((blocker.address() as { port: number }).port)
t.teardown(async () => {
  running.child.kill('SIGTERM')
  await running.stopped
  blocker.close()
  await removeDir(dataDir)
})

const cases: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
  [
    'a busy port',
    ['start', '--port', new URL(running.url).port, '--data-dir', await tempDir()],
    {},
    /CONFIG_INVALID: port \(--port \/ SLUICE_PORT\): 127\.0\.0\.1:\d+ is in use/,
  ],
  [
    'a busy data dir',
    ['start', '--port', '0', '--data-dir', dataDir],
    {},
    /CONFIG_INVALID: dataDir \(--data-dir \/ SLUICE_DATA_DIR\): .* is in use by another Sluice process/,
  ],
  [
    'a data dir of another data format, sluice dev',
    ['dev', '--port', '0', '--data-dir', otherFormatDir],
    {},
    new RegExp(
      'CONFIG_INVALID: dataDir \\(--data-dir / SLUICE_DATA_DIR\\): .* holds data format ' +
        `${DATA_FORMAT + 1}; this build reads data format ${READABLE_FORMATS} only\\. Start with an empty data dir`,
    ),
  ],
  [
    'a busy port, distributed ingest',
    ['start', '--role', 'ingest', '--port', blockedPort, '--data-dir', await tempDir()],
    distributedEnv('busyport'),
    /CONFIG_INVALID: port \(--port \/ SLUICE_PORT\): 127\.0\.0\.1:\d+ is in use/,
  ],
  [
    'a busy data dir, distributed',
    ['start', '--role', 'dedup', '--ops-port', '0', '--data-dir', dataDir],
    distributedEnv('busydir'),
    /CONFIG_INVALID: dataDir \(--data-dir \/ SLUICE_DATA_DIR\)/,
  ],
  [
    'a busy ops port, distributed',
    ['start', '--role', 'router', '--ops-port', blockedPort, '--data-dir', await tempDir()],
    distributedEnv('busyops'),
    /CONFIG_INVALID: opsPort \(--ops-port \/ SLUICE_OPS_PORT\): 127\.0\.0\.1:\d+ is in use/,
  ],
]
for (const [what, args, env, expected] of cases) {
  t.test(`${what}: exit status 1 within 2 s, naming the setting`, async (t) => {
    const p = spawnSluice(args, { SLUICE_SIGNING_KEY: TEST_SIGNING_KEY, ...env })
    const help = spawnSluice(['start', '--help'], {})
    const [{ code, ms }, baseline] = await Promise.all([p.exited, help.exited])
    t.equal(code, 1)
    t.match(p.output(), expected)
    t.ok(ms < baseline.ms + 2000, `exited ${ms} ms after it was started (sluice --help beside it: ${baseline.ms} ms)`)
  })
}

t.test('every command prints its own help and exits 0', async (t) => {
  for (const command of ['dev', 'start', 'runner', 'keys', 'envs', 'send', 'webhooks']) {
    const p = spawnSluice([command, '--help'], {})
    t.equal((await p.exited).code, 0, `${command} --help`)
    t.match(p.output(), new RegExp(`^usage: sluice ${command}`), `${command}: its usage`)
    if (['dev', 'start', 'runner'].includes(command))
      t.match(p.output(), /--ops-port {2}SLUICE_OPS_PORT \(default 8289\)/)
    else t.match(p.output(), /SLUICE_URL.*\n.*api role/)
  }
})
