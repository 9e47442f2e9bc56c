// Durations and points in time as functions give them (`step.sleep("1h30m")`, `timeout: "7d"`,
// `step.sleepUntil(date)`). Not the `ms` package: it reads "1h" but not combinations like "1h30m".

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }
const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/y

/** The longest a run may sleep or wait: a year. */
export const MAX_WAIT_MS = 365 * 86_400_000

/** Milliseconds, or a string of parts: `"30s"`, `"5m"`, `"2h"`, `"7d"`, `"1h30m"` (at most a year). */
export type Duration = number | string

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string }

/**
 * Milliseconds from a number of milliseconds or a string of parts (`"30s"`, `"5m"`, `"2h"`, `"7d"`,
 * `"1h30m"`, `"1.5h"`), from 0 up to a year.
 */
export function parseDuration(value: unknown): Parsed<number> {
  let ms: number
  if (typeof value === 'number') ms = value
  else if (typeof value === 'string') {
    const text = value.trim()
    ms = 0
    PART.lastIndex = 0
    while (PART.lastIndex < text.length) {
      const at = PART.lastIndex
      const part = PART.exec(text)
      if (!part || part.index !== at)
        return { ok: false, message: `"${value}" is not a duration (parts like 30s, 5m, 2h, 7d, 1h30m)` }
      ms += Number(part[1]) * UNIT_MS[part[2]]
      while (text[PART.lastIndex] === ' ') PART.lastIndex++
    }
    if (text === '') return { ok: false, message: 'an empty string is not a duration' }
  } else return { ok: false, message: 'must be milliseconds or a string such as "30s", "5m", "1h30m"' }
  if (!Number.isFinite(ms) || ms < 0) return { ok: false, message: 'must be a duration of 0 or more' }
  if (ms > MAX_WAIT_MS) return { ok: false, message: 'must be at most a year' }
  return { ok: true, value: Math.round(ms) }
}

/** Epoch milliseconds from a Date, an ISO 8601 string or epoch milliseconds. */
export function parseTime(value: unknown): Parsed<number> {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'string'
        ? Date.parse(value)
        : typeof value === 'number'
          ? value
          : Number.NaN
  if (!Number.isFinite(ms)) return { ok: false, message: 'must be a Date, an ISO 8601 string or epoch milliseconds' }
  return { ok: true, value: Math.round(ms) }
}
