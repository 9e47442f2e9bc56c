// The `sluice` command as a user runs it: a production server, then envs, keys, send, functions and runs.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { eventually, spawnServer, tempDir, removeDir, ROOT, TEST_SIGNING_KEY } from '../helpers/server.ts'

const run = promisify(execFile)
const sluice = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), ...args], {
    env: { ...process.env, ...env },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  )

const dataDir = await tempDir()
const functions = join(ROOT, 'tests/functions/fixtures/flow.ts')
const server = await spawnServer(['start', '--port', '0', '--data-dir', dataDir, '--functions', functions], {
  SLUICE_SIGNING_KEY: TEST_SIGNING_KEY,
})
t.teardown(async () => {
  server.child.kill('SIGTERM')
  await server.stopped
  await removeDir(dataDir)
})
const env = { SLUICE_URL: server.url, SLUICE_SIGNING_KEY: TEST_SIGNING_KEY }

t.test('envs create / list', async (t) => {
  const created = await sluice(['envs', 'create', 'staging'], env)
  t.equal(created.code, 0, created.stderr)
  t.equal(JSON.parse(created.stdout).data.name, 'staging')
  const listed = JSON.parse((await sluice(['envs', 'list'], env)).stdout)
  t.same(
    listed.data.map((e: { name: string }) => e.name),
    ['production', 'staging'],
  )
})

t.test('keys create prints the key once; send with it; revoke makes it fail', async (t) => {
  const created = JSON.parse((await sluice(['keys', 'create', '--env', 'staging'], env)).stdout).data
  t.match(created, { env: 'staging', key: /^sk_/ })
  const sent = await sluice(['send', '{"name":"cli/hello","data":{"from":"cli"}}', '--key', created.key], env)
  t.equal(sent.code, 0, sent.stderr)
  t.equal(JSON.parse(sent.stdout).ids.length, 1)
  t.equal((await sluice(['keys', 'revoke', created.id], env)).code, 0)
  const refused = await sluice(['send', '{"name":"cli/hello","data":{}}', '--key', created.key], env)
  t.equal(refused.code, 1)
  t.equal(JSON.parse(refused.stderr).code, 'KEY_INVALID')
})

t.test('a wrong signing key is refused; bad arguments explain themselves', async (t) => {
  const refused = await sluice(['keys', 'list'], { ...env, SLUICE_SIGNING_KEY: 'wrong-key-wrong-key' })
  t.equal(refused.code, 1)
  t.equal(JSON.parse(refused.stderr).code, 'UNAUTHORIZED')
  const badJson = await sluice(['send', '{nope'], env)
  t.equal(badJson.code, 2)
  t.match(badJson.stderr, /must be a JSON event/)
  const unknown = await sluice(['frobnicate'], env)
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /usage: sluice/)
  const badPort = await sluice(['dev', '--port', 'eighty'], env)
  t.equal(badPort.code, 1)
  t.match(badPort.stderr, /CONFIG_INVALID: port \(--port \/ SLUICE_PORT\)/)
})

t.test('functions pause and resume; runs bulk cancel with a dry run, then as a job', async (t) => {
  const json = async (args: string[]) => {
    const r = await sluice(args, env)
    t.equal(r.code, 0, `sluice ${args.join(' ')}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const listed = await eventually(async () => {
    const r = await sluice(['functions', 'list'], env)
    return r.code === 0 && JSON.parse(r.stdout).data.some((f: { id: string }) => f.id === 'flow-plain') ? r : undefined
  }, 30_000)
  t.ok(listed, 'lists the functions, once the runner registered them')
  t.equal((await json(['functions', 'pause', 'flow-plain'])).data.paused, true)
  t.equal((await json(['functions', 'resume', 'flow-plain', '--skip-held'])).data.paused, false)
  const again = await sluice(['functions', 'resume', 'flow-plain'], env)
  t.equal(again.code, 1)
  t.match(again.stderr, /FUNCTION_NOT_PAUSED/)
  const missing = await sluice(['functions', 'pause', 'nope'], env)
  t.equal(missing.code, 1)
  t.match(missing.stderr, /NOT_FOUND/)

  const filter = ['--function', 'flow-plain', '--status', 'failed']
  const dry = await json(['runs', 'bulk', 'cancel', ...filter, '--dry-run'])
  t.same(dry.data, { matched: 0, scanned: 0, complete: true }, 'a dry run counts')
  const job = await json(['runs', 'bulk', 'replay', ...filter, '--mode', 'retry'])
  t.equal(job.data.action, 'replay')
  const status = await json(['runs', 'bulk', 'status', job.data.id])
  t.equal(status.data.id, job.data.id, 'its progress')
  const bad = await sluice(['runs', 'bulk', 'archive', ...filter], env)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /action/, 'a bad action is refused, naming the field')
})

t.test('an unreachable server is reported with a hint', async (t) => {
  const r = await sluice(['keys', 'list'], { SLUICE_URL: 'http://127.0.0.1:1' })
  t.equal(r.code, 1)
  t.match(r.stderr, /cannot reach Sluice at http:\/\/127.0.0.1:1/)
})

t.test('a busy port or data dir is refused with the flag to change', async (t) => {
  const port = new URL(server.url).port
  const busyPort = await sluice(['dev', '--port', port, '--data-dir', await tempDir()], env)
  t.equal(busyPort.code, 1)
  t.match(busyPort.stderr, new RegExp(`CONFIG_INVALID: port \\(--port / SLUICE_PORT\\): 127.0.0.1:${port} is in use`))
  const busyDir = await sluice(['dev', '--port', '0', '--data-dir', dataDir], env)
  t.equal(busyDir.code, 1)
  t.match(
    busyDir.stderr,
    /CONFIG_INVALID: dataDir \(--data-dir \/ SLUICE_DATA_DIR\): .* is in use by another Sluice process/,
  )
})
