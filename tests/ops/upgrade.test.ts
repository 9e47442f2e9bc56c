// A data dir written by an older build opens with this one (docs/operations.md, "Backups and
// upgrades"). Each fixture of tests/fixtures/upgrade is the data dir a real older commit left after
// taking a key, a webhook and events (scripts/make-upgrade-fixture.sh made it): format 2 (before
// data format 3) is converted once on open, by stamping (core/data-format.ts), and the previous
// landed build's format 3 opens as it is. Afterwards every event reads back, the key and the webhook
// work, and the data dir is of this build's format.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { DATA_FORMAT } from '../../core/data-format.ts'
import { keyPrefix } from '../../core/keyspaces.ts'
import { openRocks } from '../../core/rocks.ts'
import { removeDir, spawnServer, tempDir, ROOT } from '../helpers/server.ts'

t.setTimeout(120_000)

const FIXTURES = ['format-2-33c78dc', 'format-3-d641d9a']

for (const name of FIXTURES) {
  t.test(`a data dir of ${name} opens, with its events, key and webhook`, async (t) => {
    const fixture = join(ROOT, 'tests/fixtures/upgrade')
    const made = JSON.parse(await readFile(join(fixture, `${name}.json`), 'utf8'))
    const dataDir = await tempDir()
    t.teardown(() => removeDir(dataDir))
    await promisify(execFile)('tar', ['-xzf', join(fixture, `${name}.tar.gz`), '-C', dataDir])
    const server = await spawnServer(['start', '--port', '0', '--data-dir', dataDir], {
      SLUICE_SIGNING_KEY: made.signingKey,
    })
    const auth = { authorization: `Bearer ${made.signingKey}` }
    try {
      const unread: string[] = []
      for (const id of made.events as string[]) {
        const response = await fetch(`${server.url}/v1/events/${id}`, { headers: auth })
        if (response.status !== 200) unread.push(`${id}: ${response.status}`)
      }
      t.same(unread, [], `every one of the ${made.events.length} events the older build stored reads back`)
      const first = (await (await fetch(`${server.url}/v1/events/${made.events[0]}`, { headers: auth })).json()).data
      t.match(first, { name: 'upgrade/order', data: { n: 0 } }, 'with its name and data')
      const send = await fetch(`${server.url}/e/${made.key}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'upgrade/after', data: {} }),
      })
      t.equal(send.status, 200, 'the event key the older build made works')
      const hook = await fetch(`${server.url}/e/${made.webhook}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'after' }),
      })
      t.equal(hook.status, 200, 'the webhook the older build made works')
    } finally {
      server.child.kill('SIGTERM')
      await server.stopped
    }
    const rocks = await openRocks(join(dataDir, 'db'), rocksOptionsOf(DEFAULTS))
    const format = (await rocks.get(keyPrefix('dataFormat')))?.toString()
    await rocks.close()
    t.equal(format, String(DATA_FORMAT), "the data dir is of this build's format now")
  })
}
