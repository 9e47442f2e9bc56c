// Cron schedules of functions (`{ cron: "TZ=Europe/Paris 0 9 * * 1-5" }`): five fields, or six with a
// leading seconds field, in UTC unless a `TZ=<IANA zone> ` prefix names another. croner parses them
// (time zones and daylight saving included).
import { Cron } from 'croner'
import type { Parsed } from './duration.ts'

export interface Schedule {
  /** The expression as written. */
  cron: string
  /** The next scheduled time strictly after `afterMs`. */
  next(afterMs: number): number
  /** The latest scheduled time at or before `atMs`, or null if none within a year. */
  latest(atMs: number): number | null
}

export function parseCron(value: unknown): Parsed<Schedule> {
  if (typeof value !== 'string' || value.trim() === '')
    return { ok: false, message: 'must be a cron expression such as "0 9 * * 1-5"' }
  const match = /^\s*(?:TZ=(\S+)\s+)?(.+?)\s*$/.exec(value)!
  const [, timezone = 'UTC', pattern] = match
  let cron: Cron
  try {
    cron = new Cron(pattern, { timezone, paused: true, mode: pattern.split(/\s+/).length === 6 ? '6-part' : '5-part' })
  } catch (err) {
    return { ok: false, message: `"${value}" is not a cron schedule: ${(err as Error).message}` }
  }
  try {
    cron.nextRun(new Date(0)) // an unknown time zone fails only here
  } catch {
    return { ok: false, message: `"${value}": unknown time zone "${timezone}" (an IANA name such as Europe/Paris)` }
  }
  return {
    ok: true,
    value: {
      cron: value,
      next: (afterMs) => cron.nextRun(new Date(afterMs))?.getTime() ?? Number.POSITIVE_INFINITY,
      latest(atMs) {
        const [previous] = cron.previousRuns(1, new Date(atMs + 1))
        return previous && atMs - previous.getTime() <= 366 * 86_400_000 ? previous.getTime() : null
      },
    },
  }
}
