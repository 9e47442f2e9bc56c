// bench/chaos/run.ts runs outside the test runner, for as long as its --duration-s says: nothing it
// imports may load tap, whose root test would end the run with its own timeout ("not ok 1 -
// timeout!", exit 142). Its imports are loaded in a child process that records every module
// resolved under tap's names.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const script = fileURLToPath(new URL('../../bench/chaos/run.ts', import.meta.url))

t.test('what bench/chaos/run.ts imports loads no test-runner module', async (t) => {
  const imported = [...readFileSync(script, 'utf8').matchAll(/^import .* from '(\.[^']+)'$/gm)].map(
    ([, path]) => new URL(path, `file://${script}`).href,
  )
  t.ok(imported.length >= 3, `its own modules: ${imported.join(', ')}`)
  const probe = `
    import { registerHooks } from 'node:module'
    const loaded = new Set()
    registerHooks({
      resolve(specifier, context, next) {
        if (/^(tap|@tapjs\\/)/.test(specifier)) loaded.add(specifier)
        return next(specifier, context)
      },
    })
    for (const url of ${JSON.stringify(imported)}) await import(url)
    process.stdout.write(JSON.stringify([...loaded]))
  `
  const args = ['--no-node-snapshot', '--conditions=sluice-source', '--input-type=module', '-e', probe]
  const loaded = JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' }))
  t.same(loaded, [], 'no tap module')
})
