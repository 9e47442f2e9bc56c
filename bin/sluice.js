#!/usr/bin/env -S node --no-node-snapshot --max-semi-space-size=16 --conditions=sluice-source
// isolated-vm needs --no-node-snapshot on Node ≥ 20; the sluice-source condition lets user
// function files import `sluice/client` from this checkout's TypeScript sources.
import { existsSync } from 'node:fs'
import { enableCompileCache } from 'node:module'

// Node's on-disk compile cache (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE): a start after
// the first neither strips types again nor compiles from source, so it is smaller and sooner
// (docs/operations.md). It never throws; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache()

// In a checkout, run the TypeScript sources (Node 24 strips types); an installed package
// (under node_modules, where Node will not strip types) runs its built dist/.
const source = new URL('../cli/main.ts', import.meta.url)
const useSource = !import.meta.url.includes('/node_modules/') && existsSync(source)
const { main } = await import(useSource ? source.href : new URL('../dist/cli/main.js', import.meta.url).href)
const code = await main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`sluice: ${err.code ? err.code + ': ' : ''}${err.message}\n`)
  // At once: Kafka clients, timers or half-opened stores would keep a failed server alive, and
  // Kubernetes or systemd restart only a process that exits.
  process.exit(1)
})
if (code >= 0) process.exitCode = code
