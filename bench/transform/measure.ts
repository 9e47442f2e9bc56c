// Load and latency measurement shared by the transform benches.

export interface Throughput {
  callsPerSec: number
  callsPerCpuSec: number
  loadedP50Ms: number
  loadedP99Ms: number
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
const round = (n: number, digits = 3) => Number(n.toFixed(digits))

/**
 * Keeps `window` calls in flight for `seconds`. Calls per CPU-second count the CPU of every
 * thread of this process (host and isolates), so the figure is per core whatever else the
 * machine is running, which wall-clock throughput on a shared box is not.
 */
export async function throughput(call: () => Promise<unknown>, window: number, seconds: number): Promise<Throughput> {
  const latencies: number[] = []
  const cpu = process.cpuUsage()
  const started = performance.now()
  const until = started + seconds * 1000
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now()
        await call()
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const elapsedS = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  latencies.sort((a, b) => a - b)
  return {
    callsPerSec: Math.round(latencies.length / elapsedS),
    callsPerCpuSec: Math.round(latencies.length / ((used.user + used.system) / 1e6)),
    loadedP50Ms: round(percentile(latencies, 50), 2),
    loadedP99Ms: round(percentile(latencies, 99), 2),
  }
}

/** One call at a time: the latency the sandbox adds to a single request. */
export async function latency(call: () => Promise<unknown>, count: number): Promise<{ p50Ms: number; p99Ms: number }> {
  const latencies: number[] = []
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await call()
    latencies.push(performance.now() - t0)
  }
  latencies.sort((a, b) => a - b)
  return { p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)) }
}
