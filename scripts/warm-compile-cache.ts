// Fills Node's compile cache (NODE_COMPILE_CACHE, which bin/sluice.js enables) with every module
// Sluice may load, so that a container's first start neither strips types nor compiles from source
// (the Dockerfile runs it at build time; docs/operations.md, "Memory and backpressure"). It imports
// each module of the folders the image holds once; importing one starts nothing.
// Usage: node scripts/warm-compile-cache.ts (the cache bin/sluice.js would use: NODE_COMPILE_CACHE,
// else os.tmpdir()/node-compile-cache).
import { readdirSync } from 'node:fs'
import { enableCompileCache, flushCompileCache } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The Dockerfile copies these (tests/deploy/dockerfile.test.ts checks they match). */
export const SOURCE_DIRS = [
  'cli',
  'config',
  'server',
  'one-pass',
  'sdk',
  'core',
  'bus',
  'ingest',
  'transformer',
  'dedup',
  'router',
  'runner',
  'store',
  'control',
  'api',
  'client',
]

if (import.meta.main) {
  const root = join(import.meta.dirname, '..')
  const { directory } = enableCompileCache()
  if (!directory) throw new Error('Node could not enable its compile cache')
  let modules = 0
  for (const dir of SOURCE_DIRS)
    for (const file of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).sort())
      if (file.endsWith('.ts') && !file.endsWith('.d.ts')) {
        await import(pathToFileURL(join(root, dir, file)).href)
        modules++
      }
  flushCompileCache()
  process.stdout.write(`compile cache: ${modules} modules in ${directory}\n`)
}
