// A server's CPU by kind of thread, from /proc/<pid>/task/*/stat: its JavaScript (`MainThread`),
// libuv's pool (`libuv-worker`: rocksdb-native's reads, writes and iterators run there), RocksDB's own
// flushes and compactions (`rocksdb:*`), V8's helpers (`V8Worker`: concurrent GC, compilation).
import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_SECOND = 100 // getconf CLK_TCK on Linux

const kindOf = (name: string) =>
  name === 'MainThread'
    ? 'main'
    : name.startsWith('libuv-worker')
      ? 'libuv'
      : name.startsWith('rocksdb')
        ? 'rocksdb'
        : name.startsWith('V8')
          ? 'v8'
          : 'other'

/** utime + stime per kind of thread so far, in µs (threads that ended are not counted). */
export function cpuByThread(pid: number): Record<string, number> {
  const sums: Record<string, number> = { main: 0, libuv: 0, rocksdb: 0, v8: 0, other: 0 }
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    } catch {
      continue // ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    sums[kindOf(name)] += ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND
  }
  return sums
}

/** What each kind of thread spent between two readings, per `per` (µs). */
export function perThreadDelta(before: Record<string, number>, after: Record<string, number>, per: number) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.round((after[k] - (before[k] ?? 0)) / per)]))
}
