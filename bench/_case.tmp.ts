// temporary: one bench/ingest case on a fresh server of `root`: cpu µs/event and events/s
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startSluice, peakRssMb } from './lib.ts'
import { cpuMicros, wrk } from './wrk.ts'
import { batchOf, event } from './ingest/events.ts'
const [root, shape = '500', seconds = '8'] = process.argv.slice(2)
const c = { single: { body: JSON.stringify(event(1)), n: 1, conns: 64 }, '50': { body: batchOf(50), n: 50, conns: 32 }, '500': { body: batchOf(500), n: 500, conns: 16 } }[shape]!
const dir = await mkdtemp(join(tmpdir(), 'sluice-case-'))
const s = await startSluice(dir, { SLUICE_DURABILITY: 'always' }, root)
const pid = s.child.pid!
await sleep(300)
await wrk(`${s.url}/e/k`, c.body, c.conns, 2)
await sleep(500)
const cpu0 = cpuMicros(pid)
const r = await wrk(`${s.url}/e/k`, c.body, c.conns, Number(seconds))
const cpu = cpuMicros(pid) - cpu0
const events = (r.requests - r.non2xx) * c.n
const peak = peakRssMb(pid)
await s.stop()
await rm(dir, { recursive: true, force: true })
console.log(JSON.stringify({ root, shape, cpuUs: Math.round((cpu / events) * 100) / 100, eventsPerSec: Math.round(events / r.seconds), peak }))
