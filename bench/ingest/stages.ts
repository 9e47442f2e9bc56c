// bench/ingest/stages.ts: where an embedded server's CPU goes under bench/ingest's load, by thread and,
// on the main thread, by stage of the event path. A server (scripts/start.sh, as bench/ingest runs
// it) is started with node's --cpu-prof, loaded by wrk for `seconds` after a warm-up, and stopped;
// its threads' CPU (utime + stime of /proc/<pid>/task/*) is read around the load, and the main
// thread's profile, over the load's window only, is summed by stage: each sample goes to the
// innermost frame a stage claims (RULES), else to "HTTP and the rest" (node's HTTP, fastify, hooks,
// metrics). The profiler adds some CPU of its own; the shares are what to read.
// Usage: node --conditions=sluice-source bench/ingest/stages.ts [single|50|500] [seconds]
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { report, startSluice } from '../lib.ts'
import { accepted, ensureWrk, round, wrk } from '../wrk.ts'
import { batchOf, event } from './events.ts'

const shape = process.argv[2] ?? '500'
const seconds = Number(process.argv[3] ?? 10)
const CASES: Record<string, { body: string; events: number; connections: number }> = {
  single: { body: JSON.stringify(event(1)), events: 1, connections: 64 },
  '50': { body: batchOf(50), events: 50, connections: 32 },
  '500': { body: batchOf(500), events: 500, connections: 16 },
}
const c = CASES[shape]
if (!c) throw new Error(`usage: bench/ingest/stages.ts [single|50|500] [seconds]; not ${shape}`)

/** Stages, by the frames they own; the first rule a frame meets, from the sample's leaf up, takes it. */
const RULES: Array<[stage: string, owns: (fn: string, url: string) => boolean]> = [
  ['GC', (fn) => fn === '(garbage collector)'],
  ["store: the events' values (their JSON)", (_, url) => url.endsWith('store/rocksdb-events.ts')],
  ['store: index entries', (_, url) => url.includes('/store/')],
  ['dedup: lookup and marks', (_, url) => url.includes('/dedup/')],
  ['router', (_, url) => url.includes('/router/')],
  [
    'write: RocksDB batch (binding), WAL sync, log',
    (_, url) => /rocksdb-native|core\/rocks\.ts|core\/wal-sync\.ts|bus\/local/.test(url),
  ],
  ['one pass: the rest', (_, url) => url.endsWith('one-pass/index.ts')],
  ['ingest: UTF-8 check, JSON.parse', (fn, url) => url.endsWith('ingest/index.ts') && fn === 'checkedEvents'],
  ['ingest: validation, IDs, records', (_, url) => /core\/(event|ids)\.ts|schema-check/.test(url)],
  ['ingest: the rest (body, admission, limits)', (_, url) => url.includes('/ingest/')],
]

interface Node {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

ensureWrk()
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
const profileDir = await mkdtemp(join(tmpdir(), 'sluice-profile-'))
const server = await startSluice(dataDir, { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` })
const pid = server.child.pid!
await wrk(`${server.url}/e/k`, c.body, c.connections, 2)
await sleep(500)
const before = threads(pid)
const loadStart = Date.now()
const run = await wrk(`${server.url}/e/k`, c.body, c.connections, seconds)
const loadEnd = Date.now()
const after = threads(pid)
const stopping = Date.now()
await server.stop()
const events = accepted(run) * c.events
// The server's profile is the largest: scripts/start.sh's dashboard check, a node process of its own, writes one too.
const profiles = (await readdir(profileDir)).filter((f) => f.endsWith('.cpuprofile'))
const sizes = await Promise.all(profiles.map(async (f) => (await stat(join(profileDir, f))).size))
const file = profiles[sizes.indexOf(Math.max(...sizes))]
if (!file) throw new Error('the server wrote no .cpuprofile')
const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as Profile
await rm(dataDir, { recursive: true, force: true })
await rm(profileDir, { recursive: true, force: true })

const rows: Array<Record<string, string | number>> = []
const threadUs = new Map<string, number>()
for (const [name, us] of after) threadUs.set(name, us - (before.get(name) ?? 0))
const processUs = [...threadUs.values()].reduce((a, b) => a + b, 0)
for (const [name, us] of [...threadUs].sort((a, b) => b[1] - a[1]))
  if (us > 0)
    rows.push({
      part: `thread ${name}`,
      share: `${round((us / processUs) * 100, 1)} %`,
      'cpu µs/event': round(us / events, 2),
    })
const mainUs = threadUs.get('MainThread') ?? 0
// The main thread's stages, over the load's window. The profile ends as the server stops, which
// begins when it is asked to (how long the stop and the profile's writing then take does not count).
const windowEnd = profile.endTime - (stopping - loadEnd) * 1000
const windowStart = windowEnd - (loadEnd - loadStart) * 1000
const byStage = byStageIn(profile, windowStart, windowEnd)
const busy = [...byStage].filter(([stage]) => stage !== 'idle').reduce((a, [, us]) => a + us, 0)
for (const [stage, us] of [...byStage].sort((a, b) => b[1] - a[1]))
  if (stage !== 'idle')
    rows.push({
      part: `main thread: ${stage}`,
      share: `${round((us / busy) * 100, 1)} %`,
      // The main thread's measured CPU, shared out as the profile's samples are.
      'cpu µs/event': round(((us / busy) * mainUs) / events, 2),
    })
report('ingest-stages', rows, {
  case: shape,
  seconds,
  eventsPerSec: Math.round(events / run.seconds),
  cpuPerEventUs: round(processUs / events, 2),
})

/** Per thread name (threads of one name summed), CPU µs so far. */
function threads(pid: number): Map<string, number> {
  const ticks = 100 // USER_HZ
  const out = new Map<string, number>()
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim()
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.set(name, (out.get(name) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticks)
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out
}

/** µs of the profile's samples between `from` and `to` (its clock), by stage. */
function byStageIn(p: Profile, from: number, to: number): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const child of n.children ?? []) parent.set(child, n.id)
  const stageOf = new Map<number, string>()
  const stage = (id: number): string => {
    const known = stageOf.get(id)
    if (known) return known
    let found = 'HTTP and the rest (node, fastify, hooks, metrics)'
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame
      if (functionName === '(idle)') found = 'idle'
      const rule = RULES.find(([, owns]) => owns(functionName, url))
      if (rule || functionName === '(idle)') {
        found = rule?.[0] ?? found
        break
      }
    }
    stageOf.set(id, found)
    return found
  }
  const out = new Map<string, number>()
  let at = p.endTime - p.timeDeltas.reduce((a, b) => a + b, 0)
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i]
    if (at < from || at >= to) return
    const s = stage(id)
    out.set(s, (out.get(s) ?? 0) + p.timeDeltas[i])
  })
  return out
}
