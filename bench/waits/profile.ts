// Where a server's CPU went, from a .cpuprofile (node --cpu-prof): self time by function and by
// file, the top entries. bench/waits writes one per server with BENCH_CPU_PROF_DIR=<dir>.
// Usage: node bench/waits/profile.ts <file.cpuprofile> [top (25)]
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}
interface Profile {
  nodes: Node[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8')) as Profile
const top = Number(process.argv[3] ?? 25)
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
/** Self µs per node: each sample's time delta goes to the node it hit. */
const self = new Map<number, number>()
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const total = [...self.values()].reduce((a, b) => a + b, 0)
const idle = [...self]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
  .reduce((a, [, us]) => a + us, 0)

const shortUrl = (url: string) =>
  url.replace(/^file:\/\/.*?\/(node_modules\/|wbench\/|main\/)/, '$1').replace(/^node:/, 'node:')
const sum = (key: (n: Node) => string) => {
  const sums = new Map<string, number>()
  for (const [id, us] of self) {
    const k = key(byId.get(id)!)
    sums.set(k, (sums.get(k) ?? 0) + us)
  }
  return [...sums].sort((a, b) => b[1] - a[1]).slice(0, top)
}
const line = ([k, us]: [string, number]) =>
  `${((us / (total - idle)) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`
process.stdout.write(`main thread: ${((total - idle) / 1000).toFixed(0)} ms busy of ${(total / 1000).toFixed(0)} ms\n`)
process.stdout.write(
  '\nby function (self):\n' +
    sum(
      (n) => `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`,
    )
      .filter(([k]) => !k.startsWith('(idle)'))
      .map(line)
      .join('\n') +
    '\n',
)
process.stdout.write(
  '\nby file (self):\n' +
    sum((n) => shortUrl(n.callFrame.url) || n.callFrame.functionName)
      .filter(([k]) => k !== '(idle)')
      .map(line)
      .join('\n') +
    '\n',
)
