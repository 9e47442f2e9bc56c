// Seeded randomness for the chaos runs: the same seed replays the same kill order, gaps and
// load mix. mulberry32 is a well-known 32-bit generator small enough to keep here rather
// than depend on fast-check's internals (pure-rand is not a declared dependency).
export interface Random {
  readonly seed: number
  /** Uniform in [0, 1). */
  next(): number
  /** Integer in [min, max]. */
  int(min: number, max: number): number
  pick<T>(items: readonly T[]): T
  shuffle<T>(items: readonly T[]): T[]
  bytes(count: number): Buffer
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return {
    seed,
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)],
    shuffle(items) {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i)
        ;[out[i], out[j]] = [out[j], out[i]]
      }
      return out
    },
    bytes: (count) => Buffer.from(Array.from({ length: count }, () => int(0, 255))),
  }
}

/** A seed from the environment (CHAOS_SEED) to replay a run, or a fresh one. */
export function chaosSeed(given?: string): number {
  const parsed = given === undefined || given === '' ? NaN : Number(given)
  return Number.isInteger(parsed) ? parsed >>> 0 : Math.floor(Math.random() * 2 ** 32)
}
