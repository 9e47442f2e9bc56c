// The package as npm installs it: bin/sluice.js beside dist/ (built by `npm run build`, as prepack
// does) and no TypeScript sources, so the bin runs the built JavaScript. It starts, takes an event
// and reports its version: a source-only path (a file read relative to a .ts module, a build that
// does not compile) fails here, not on a user's machine.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { copyFile, mkdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT, eventually, getJson, postJson, removeDir, tempDir } from '../helpers/server.ts'

const dir = await tempDir('sluice-package-')
t.teardown(() => removeDir(dir))

t.test('the built package starts, accepts an event and knows its version', async (t) => {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  await promisify(execFile)(process.execPath, [
    tsc,
    '-p',
    join(ROOT, 'tsconfig.build.json'),
    '--outDir',
    join(dir, 'dist'),
  ])
  await mkdir(join(dir, 'bin'))
  await copyFile(join(ROOT, 'bin/sluice.js'), join(dir, 'bin/sluice.js'))
  await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'))
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', join(dir, 'bin/sluice.js'), 'dev', '--port', '0', '--data-dir', join(dir, 'data')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.teardown(async () => {
    child.kill('SIGTERM')
    await exited
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output)
      if (match) resolve(match[1])
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)))
  })
  const sent = await postJson(`${url}/e/k`, { name: 'package/hello', data: {} })
  t.equal(sent.status, 200)
  const { version } = (await import(join(ROOT, 'package.json'), { with: { type: 'json' } })).default
  const metrics = await (await fetch(`${url}/metrics`)).text()
  t.match(metrics, `sluice_info{version="${version}"`)
  const stored = await eventually(async () => {
    const event = await getJson(`${url}/v1/events/${sent.body.ids[0]}`)
    return event.status === 200 ? event.body.data : undefined
  })
  t.equal(stored.name, 'package/hello', 'stored')
})
