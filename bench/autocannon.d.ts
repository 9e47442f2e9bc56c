// autocannon ships no types; bench/lib.ts uses this much of it.
declare module 'autocannon' {
  interface Options {
    url: string
    method?: string
    body?: string
    headers?: Record<string, string>
    connections?: number
    duration?: number
    pipelining?: number
  }
  interface Result {
    requests: { average: number }
    latency: { p50: number; p99: number }
    non2xx: number
    errors: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
