// A distributed api role refuses a backup with 409 BACKUP_UNSUPPORTED (its state is Kafka's and
// ClickHouse's, docs/operations.md "Backups and upgrades"), and writes nothing at the path named.
import t from 'tap'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { postJson, removeDir, tempDir } from '../helpers/server.ts'
import { auth, distributedEnv, startNode } from './cluster.ts'

t.test('POST /v1/backups on a distributed api role: 409 BACKUP_UNSUPPORTED, nothing written', async (t) => {
  const api = await startNode(['api'], distributedEnv('backupno'))
  const parent = await tempDir()
  t.teardown(async () => {
    await api.kill('SIGKILL')
    await removeDir(parent)
  })
  const to = join(parent, 'copy')
  const answer = await postJson(`${api.url}/v1/backups`, { to }, auth)
  t.equal(answer.status, 409)
  t.equal(answer.body.code, 'BACKUP_UNSUPPORTED')
  t.match(answer.body.error, /distributed mode/)
  t.notOk(existsSync(to), 'no directory was made')
})
