// The run starts (and ends) bench/flow/functions.ts notes in BENCH_FLOW_LOG: one line per run when
// its step began, `start <n> <key> <receivedAt> <at>`, and `end …` when it returned.
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { settled, startServer } from '../waits/server.ts'

export interface Start {
  n: number
  key: string
  receivedAt: number
  /** When the step began (or, read with `what: 'end'`, when the run returned). */
  startedAt: number
}

/** Every start (or end) noted so far, in the order noted, and how many events were noted more than once. */
export function readStarts(path: string, what: 'start' | 'end' = 'start'): { starts: Start[]; repeated: number } {
  if (!existsSync(path)) return { starts: [], repeated: 0 }
  const seen = new Set<number>()
  const starts: Start[] = []
  let repeated = 0
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue
    const [kind, n, key, receivedAt, startedAt] = line.split(' ')
    if (kind !== what) continue
    const start = { n: Number(n), key, receivedAt: Number(receivedAt), startedAt: Number(startedAt) }
    if (seen.has(start.n)) {
      repeated++
      continue
    }
    seen.add(start.n)
    starts.push(start)
  }
  return { starts, repeated }
}

/** Reads the starts each 500 ms until `done(starts)` holds; throws after `timeoutMs`. */
export async function startsWhen(
  path: string,
  done: (starts: Start[]) => boolean,
  timeoutMs: number,
  what: string,
): Promise<{ starts: Start[]; repeated: number }> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const read = readStarts(path)
    if (done(read.starts)) return read
    if (Date.now() > deadline)
      throw new Error(`${what}: not done in ${timeoutMs / 1000} s (${read.starts.length} started)`)
    await sleep(500)
  }
}

/** A server serving bench/flow/functions.ts, noting its runs in `logPath`, settled; `close` removes it all. */
export async function startFlowServer(name: string) {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-flow-'))
  const logPath = join(dir, 'starts.log')
  const server = await startServer(name, { functions: 'bench/flow/functions.ts', env: { BENCH_FLOW_LOG: logPath } })
  await settled(server)
  return {
    server,
    logPath,
    async close() {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
