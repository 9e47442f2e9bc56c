// `sluice dev|start|runner`: starts the server for a parsed configuration and stops it on SIGTERM/SIGINT.
import type { Config } from '../config/config.ts'
import { createLogger } from './log.ts'
import { applyHeapGrowingPercent } from './heap-growing.ts'
import { startSluice } from './start.ts'
import { stopOnSignals } from '../core/lifecycle.ts'

export async function serve(command: 'dev' | 'start' | 'runner', config: Config): Promise<void> {
  const log = createLogger(config.logLevel)
  // A failure here rejects, and bin/sluice.js exits with status 1 at once.
  const running = await startSluice(config, log)
  // Once every module is loaded: a V8 flag set earlier would make V8 reject their compile caches.
  applyHeapGrowingPercent(config.heapGrowingPercent)
  if (config.heapGrowingPercent > 0)
    log.info({ heapGrowingPercent: config.heapGrowingPercent }, 'V8 heap growing percent set')
  if (command === 'dev')
    process.stdout.write(`\n  Sluice Dev Server: ${running.url}\n  Event API: POST ${running.url}/e/<any key>\n\n`)
  stopOnSignals(running, config.shutdownGraceMs, log)
}
