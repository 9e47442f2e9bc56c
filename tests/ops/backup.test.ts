// Backups of a running embedded server (`sluice backup`, POST /v1/backups) and their restore
// (`sluice restore`): the copy holds one point in time of the whole data dir, made while events keep
// arriving; restored into a new data dir, a server started on it has every event acknowledged before
// the backup began, the keys and the webhooks, and none sent after it ended. Bad requests change
// nothing; a viewer may not make one.
import t from 'tap'
import { existsSync } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import {
  getJson,
  postJson,
  removeDir,
  spawnServer,
  tempDir,
  TEST_SIGNING_KEY,
  type ChildServer,
} from '../helpers/server.ts'
import { spawnSluice } from './sluice-process.ts'

t.setTimeout(180_000)

const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
const dirs: string[] = []
const dir = async () => {
  const d = await tempDir()
  dirs.push(d)
  return d
}
const servers: ChildServer[] = []
const start = async (dataDir: string) => {
  const server = await spawnServer(['start', '--port', '0', '--data-dir', dataDir], {
    SLUICE_SIGNING_KEY: TEST_SIGNING_KEY,
  })
  servers.push(server)
  return server
}
const stop = async (server: ChildServer) => {
  server.child.kill('SIGTERM')
  await server.stopped
}
t.teardown(async () => {
  for (const s of servers) if (s.child.exitCode === null) await stop(s)
  for (const d of dirs) await removeDir(d)
})

const post = (server: ChildServer, path: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })

async function send(server: ChildServer, key: string, n: number): Promise<string> {
  const response = await post(server, `/e/${key}`, { name: 'backup/order', data: { n } }, {})
  if (response.status !== 200) throw new Error(`send ${n}: ${response.status} ${await response.text()}`)
  return (await response.json()).ids[0]
}

const sluice = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const p = spawnSluice(args, env)
  const { code } = await p.exited
  return { code, output: p.output() }
}

t.test('a backup made under load restores into a server with exactly what it held', async (t) => {
  const dataDir = await dir()
  const server = await start(dataDir)
  const { key } = (await postJson(`${server.url}/v1/keys`, { env: 'production' }, auth)).body.data
  const transform = 'function transform(evt) { return { name: "backup/hook", data: evt } }'
  const hook = (await postJson(`${server.url}/v1/webhooks`, { name: 'backup', transform }, auth)).body.data
  const before: string[] = []
  for (let n = 0; n < 150; n++) before.push(await send(server, key, n))

  // Events keep arriving while the backup is made.
  let sending = true
  const during: string[] = []
  const sender = (async () => {
    for (let n = 1000; sending; n++) during.push(await send(server, key, n))
  })()
  const backupsDir = await dir()
  const to = join(backupsDir, 'nightly')
  const env = { SLUICE_URL: server.url, SLUICE_SIGNING_KEY: TEST_SIGNING_KEY }
  const made = await sluice(['backup', '--to', to], env)
  sending = false
  await sender
  t.equal(made.code, 0, `sluice backup exits 0 (${made.output})`)
  const answer = JSON.parse(made.output.slice(made.output.indexOf('{')))
  t.equal(answer.data.path, to, 'it names the backup')
  t.ok(answer.data.keys > 150, `it copied the database (${answer.data.keys} keys)`)
  t.same((await readdir(to)).sort(), ['backup.json', 'db'], 'the backup is a database and its manifest')
  t.equal((await stat(to)).mode & 0o777, 0o700, "only the server's user may read it")
  t.same((await readdir(backupsDir)).sort(), ['nightly'], 'nothing partial is left beside it')
  const manifest = JSON.parse(await readFile(join(to, 'backup.json'), 'utf8'))
  t.equal(manifest.keys, answer.data.keys, 'the manifest says what was copied')

  const after: string[] = []
  for (let n = 5000; n < 5010; n++) after.push(await send(server, key, n))
  t.ok(during.length > 0, `events were acknowledged while the backup was made (${during.length})`)

  const audit = (await getJson(`${server.url}/v1/audit?limit=20`, auth)).body.data
  t.ok(
    audit.some((entry: { action: string; status: number }) => entry.action === 'backups:admin' && entry.status === 201),
    'the backup is in the audit log',
  )

  // Restore: only into a data dir without a database, and only from a backup.
  await stop(server)
  const refused = await sluice(['restore', '--from', to, '--data-dir', dataDir])
  t.equal(refused.code, 1, 'restore refuses a data dir that holds a database')
  t.match(refused.output, /--data-dir: .* already holds a database/)
  const notBackup = await sluice(['restore', '--from', backupsDir, '--data-dir', await dir()])
  t.equal(notBackup.code, 1, 'restore refuses a directory that is not a backup')
  t.match(notBackup.output, /--from: .* is not a Sluice backup/)
  const restoredDir = join(await dir(), 'restored')
  const restored = await sluice(['restore', '--from', to, '--data-dir', restoredDir])
  t.equal(restored.code, 0, `sluice restore exits 0 (${restored.output})`)

  const again = await start(restoredDir)
  const stored = async (id: string) => (await fetch(`${again.url}/v1/events/${id}`, { headers: auth })).status
  const missing = []
  for (const id of before) if ((await stored(id)) !== 200) missing.push(id)
  t.same(missing, [], 'every event acknowledged before the backup began is in the restored server')
  const afterStatuses = await Promise.all(after.map(stored))
  t.same(
    afterStatuses,
    after.map(() => 404),
    'none sent after the backup ended is',
  )
  t.equal((await post(again, `/e/${key}`, { name: 'backup/order', data: { n: -1 } }, {})).status, 200, 'the key works')
  const hookAnswer = await post(again, `/e/${hook.id}`, { kind: 'paid' }, {})
  t.equal(hookAnswer.status, 200, 'the webhook works')
  await stop(again)
})

t.test('bad backup requests are refused with the field named and change nothing', async (t) => {
  const dataDir = await dir()
  const server = await start(dataDir)
  const existing = await dir()
  const parent = await dir()
  const cases: Array<[string, unknown, number, string, RegExp]> = [
    ['a relative path', { to: 'backups/x' }, 400, 'REQUEST_INVALID', /body\.to: must be an absolute path/],
    ['a path that exists', { to: existing }, 409, 'CONFLICT', /body\.to: .* exists/],
    ['a missing parent', { to: join(parent, 'no', 'such') }, 400, 'REQUEST_INVALID', /body\.to: .* is not a directory/],
    [
      'inside the data dir',
      { to: join(dataDir, 'copy') },
      400,
      'REQUEST_INVALID',
      /body\.to: must be outside the data dir/,
    ],
    ['no path', {}, 400, 'REQUEST_INVALID', /to/],
    ['an unknown field', { to: join(parent, 'x'), extra: 1 }, 400, 'REQUEST_INVALID', /extra/],
  ]
  for (const [what, body, status, code, message] of cases) {
    const response = await post(server, '/v1/backups', body)
    const answer = await response.json()
    t.equal(response.status, status, `${what}: ${status}`)
    t.equal(answer.code, code, `${what}: ${code}`)
    t.match(answer.error, message, `${what}: the message names the field`)
  }
  t.same(await readdir(parent), [], 'no backup, partial or whole, was made')
  t.notOk(existsSync(join(dataDir, 'copy')), 'nothing was written into the data dir')

  const viewer = (await postJson(`${server.url}/v1/tokens`, { name: 'looker', role: 'viewer' }, auth)).body.data.token
  const forbidden = await post(server, '/v1/backups', { to: join(parent, 'v') }, { authorization: `Bearer ${viewer}` })
  t.equal(forbidden.status, 403, 'a viewer may not make a backup')
  t.match((await forbidden.json()).error, /backups:admin/, 'the refusal names the permission')
  t.same(await readdir(parent), [], 'the refused request made nothing')
  await stop(server)
})
