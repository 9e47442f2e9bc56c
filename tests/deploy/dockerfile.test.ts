// The Dockerfile and .dockerignore, read as the build would (no Docker engine on these machines):
// multi-stage, the runtime holds production dependencies only and every module Sluice loads, it runs
// as the chart's numeric user, and its HEALTHCHECK (run here against a real server) uses node.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { ROOT, removeDir, startServer, tempDir } from '../helpers/server.ts'
import { spawnSluice } from '../ops/sluice-process.ts'
import { freePort } from '../infra/ports.ts'

const run = promisify(execFile)

interface Stage {
  name?: string
  instructions: { op: string; args: string }[]
}

/** Stages of the Dockerfile, continuation lines joined and comments dropped. */
function stages(text: string): Stage[] {
  const lines = text
    .replace(/^\s*#.*\n/gm, '')
    .replace(/\\\n/g, ' ')
    .split('\n')
  const result: Stage[] = []
  for (const line of lines.map((l) => l.trim()).filter(Boolean)) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line)!
    if (op.toUpperCase() === 'FROM') result.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1], instructions: [] })
    result.at(-1)?.instructions.push({ op: op.toUpperCase(), args })
  }
  return result
}

const dockerfile = stages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
const runtime = dockerfile.at(-1)!
const of = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args)
const stageNamed = (name: string) => dockerfile.find((s) => s.name === name)
/** COPY sources of the runtime stage from the build context (not --from another stage). */
const copied = of(runtime, 'COPY')
  .filter((args) => !args.startsWith('--from'))
  .flatMap((args) => args.split(/\s+/).slice(0, -1))
  .map((src) => src.replace(/\/$/, ''))
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))

t.test('multi-stage: production dependencies and the built dashboard come from build stages', async (t) => {
  t.ok(dockerfile.length >= 2, 'more than one stage')
  const fromStage = of(runtime, 'COPY').filter((args) => args.startsWith('--from'))
  const deps = fromStage.find((args) => /\snode_modules\/?$/.test(args))
  const depsStage = stageNamed(/--from=(\S+)/.exec(deps ?? '')?.[1] ?? '')
  t.ok(depsStage, 'node_modules come from a stage of this Dockerfile')
  t.match(of(depsStage!, 'RUN').join('\n'), /npm ci --omit=dev/, 'which installs production dependencies only')
  t.notMatch(of(runtime, 'RUN').join('\n'), /npm (ci|install|i)\b/, 'the runtime stage installs nothing')
  const dashboard = fromStage.find((args) => /\sdist\/dashboard\/?$/.test(args))
  const dashboardStage = stageNamed(/--from=(\S+)/.exec(dashboard ?? '')?.[1] ?? '')
  t.match(of(dashboardStage!, 'RUN').join('\n'), /node scripts\/build-dashboard\.ts/, 'the dashboard is built')
  t.match(
    of(runtime, 'ENV').join(' '),
    /NODE_OPTIONS="--no-node-snapshot --max-semi-space-size=16 --conditions=sluice-source"/,
  )
  t.same(of(runtime, 'ENTRYPOINT'), ['["node", "bin/sluice.js"]'])
})

t.test(
  "jemalloc, as npm start runs it: installed, linked where LD_PRELOAD points, with start.sh's MALLOC_CONF",
  async (t) => {
    const run = of(runtime, 'RUN').join('\n')
    t.match(run, /apt-get install [^&]*\blibjemalloc2\b/)
    const env = of(runtime, 'ENV').join(' ')
    const preload = /\bLD_PRELOAD=(\S+)/.exec(env)?.[1]
    t.ok(preload, 'LD_PRELOAD is set')
    t.match(run, new RegExp(`ln -s "\\$\\(find /usr/lib -name libjemalloc\\.so\\.2[^"]*\\)" ${preload}`))
    const startScript = readFileSync(join(ROOT, 'scripts/start.sh'), 'utf8')
    const conf = /MALLOC_CONF:-([^}]+)\}/.exec(startScript)?.[1]
    t.ok(conf, "start.sh's default MALLOC_CONF")
    t.match(env, new RegExp(`\\bMALLOC_CONF=${conf}(\\s|$)`), 'the same in the image')
  },
)

t.test('the runtime runs as a numeric non-root user, the one the Helm chart names', async (t) => {
  const [user] = of(runtime, 'USER')
  t.match(user, /^\d+:\d+$/, 'numeric uid:gid, so runAsNonRoot can verify it')
  const [uid, gid] = user.split(':').map(Number)
  t.not(uid, 0)
  const values = parse(readFileSync(join(ROOT, 'deploy/helm/sluice/values.yaml'), 'utf8'))
  t.equal(values.podSecurityContext.runAsUser, uid)
  t.equal(values.podSecurityContext.runAsGroup, gid)
  t.equal(values.securityContext.runAsUser, uid)
})

// The modules Sluice loads from bin/sluice.js on: relative imports (static and dynamic) and packages.
function runtimeGraph(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const source = readFileSync(file, 'utf8')
    const specifiers = [
      ...source.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm),
      ...source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
      ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
    ].map((m) => m[1])
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier))
      else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
        const parts = specifier.split('/')
        packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0])
      }
    }
  }
  visit(join(ROOT, 'bin/sluice.js'))
  visit(join(ROOT, 'cli/main.ts')) // bin/sluice.js imports it by a computed URL
  return { files, packages }
}

t.test('every module Sluice loads is in the image, and every package it imports is a production one', async (t) => {
  const { files, packages } = runtimeGraph()
  t.ok(files.size > 50, `${files.size} modules reached`)
  const tops = new Set([...files].map((f) => relative(ROOT, f).split('/')[0]))
  for (const top of tops) {
    t.ok(copied.includes(top), `${top}/ is copied into the image`)
    t.notOk(ignored.includes(top), `${top} is not in .dockerignore`)
  }
  t.ok(copied.includes('package.json'), 'package.json (exports, the version the API reports)')
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const production = new Set([...Object.keys(pkg.dependencies), pkg.name])
  t.same(
    [...packages].filter((p) => !production.has(p)),
    [],
    'imported packages that npm ci --omit=dev leaves out',
  )
  for (const src of copied) t.ok(existsSync(join(ROOT, src)), `${src} exists`)
})

t.test('.dockerignore keeps dependencies, builds, state, caches and the repository out', async (t) => {
  for (const entry of ['node_modules', 'dist', '.git', '.sluice', 'tests/infra/.cache', 'bench', '*.log']) {
    t.ok(ignored.includes(entry), entry)
  }
})

t.test('HEALTHCHECK: node, no curl, healthy when either port answers /healthz', async (t) => {
  const [healthcheck] = of(runtime, 'HEALTHCHECK')
  const command = JSON.parse(/\bCMD\s+(\[.*\])$/.exec(healthcheck)![1]) as string[]
  t.equal(command[0], 'node')
  t.notMatch(healthcheck, /curl|wget/)
  t.match(command.join(' '), /\/healthz/)
  const server = await startServer()
  t.teardown(() => server.stop())
  const port = new URL(server.url).port
  const closed = String(await freePort())
  const check = (env: Record<string, string>) =>
    run(command[0], command.slice(1), { env: { ...process.env, ...env }, timeout: 10_000 }).then(
      () => 0,
      (err) => err.code as number,
    )
  t.equal(await check({ SLUICE_PORT: port, SLUICE_OPS_PORT: closed }), 0, 'the HTTP port answers')
  t.equal(await check({ SLUICE_PORT: closed, SLUICE_OPS_PORT: port }), 0, 'the ops port answers')
  t.equal(await check({ SLUICE_PORT: closed, SLUICE_OPS_PORT: closed }), 1, 'neither answers: unhealthy')
})

t.test("the compile cache ships filled: as the image's user, for every module its folders hold", async (t) => {
  const cache = /\bNODE_COMPILE_CACHE=(\S+)/.exec(of(runtime, 'ENV').join(' '))?.[1]
  t.ok(cache, 'NODE_COMPILE_CACHE is set')
  t.match(of(runtime, 'RUN').join('\n'), new RegExp(`mkdir [^&]*${cache}[^&]*&& chown 10001:10001 [^&]*${cache}`))
  const at = (test: (i: { op: string; args: string }) => boolean) => runtime.instructions.findIndex(test)
  const user = at((i) => i.op === 'USER')
  const fill = at((i) => i.op === 'RUN' && /^node scripts\/warm-compile-cache\.ts$/.test(i.args))
  t.ok(user >= 0 && fill > user, 'filled after USER: Node keeps a cache per user id')
  t.ok(copied.includes('scripts/warm-compile-cache.ts'))
  // It imports the modules of the image's source folders: the copied folders that hold TypeScript.
  const { SOURCE_DIRS } = await import('../../scripts/warm-compile-cache.ts')
  const holdsTypeScript = (dir: string) =>
    statSync(join(ROOT, dir)).isDirectory() &&
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.ts'))
  t.same([...SOURCE_DIRS].sort(), copied.filter((c) => !c.includes('/') && holdsTypeScript(c)).sort())
  // Filled as the build fills it, a server started on it strips no module's types.
  const dir = await tempDir()
  const dataDir = await tempDir()
  t.teardown(() => Promise.all([removeDir(dir), removeDir(dataDir)]))
  const env = { NODE_COMPILE_CACHE: dir, NODE_OPTIONS: '' }
  await run(process.execPath, ['--no-node-snapshot', '--conditions=sluice-source', 'scripts/warm-compile-cache.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  })
  const sluice = spawnSluice(['dev', '--port', '0', '--data-dir', dataDir], {
    ...env,
    NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
  })
  t.teardown(async () => {
    sluice.child.kill('SIGTERM')
    await sluice.exited
  })
  await sluice.up()
  const fromCache = sluice.output().match(/retrieving transpile cache for StrippedTypeScript \S+\.\.\.success/g) ?? []
  t.ok(fromCache.length > 50, `${fromCache.length} modules' stripped sources came from the cache`)
  t.notMatch(sluice.output(), /no transpile cache for StrippedTypeScript/, 'none was stripped again')
})
