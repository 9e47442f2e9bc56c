export function time(value: number | string | null | undefined): string {
  if (value === null || value === undefined || value === '') return ''
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString()
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return ''
  if (ms < 1_000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const seconds = Math.round((ms % 60_000) / 1_000)
  return `${Math.floor(ms / 60_000)} min${seconds ? ` ${seconds} s` : ''}`
}

const UNITS: Array<[number, string]> = [
  [86_400_000, 'day'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
]

/** A configured duration in its largest whole unit ("2 s", "1 min", "7 days"), as options are written. */
export function span(ms: number): string {
  for (const [unit, name] of UNITS)
    if (ms % unit === 0) return `${ms / unit} ${name}${name === 'day' && ms !== unit ? 's' : ''}`
  return duration(ms)
}

/** A rate's period after a slash: "min" for one minute, "2 s" otherwise. */
export const per = (ms: number): string => span(ms).replace(/^1 /, '')

export const ms = (iso: string | null | undefined): number | undefined => (iso ? Date.parse(iso) : undefined)

/** "in 3 min", "20 s ago": how far a time is from now, only as precise as a reader needs. */
export function fromNow(iso: string | null | undefined, nowMs = Date.now()): string {
  const at = ms(iso)
  if (at === undefined || Number.isNaN(at)) return ''
  const span = roughly(Math.abs(at - nowMs))
  return at >= nowMs ? `in ${span}` : `${span} ago`
}

function roughly(ms: number): string {
  if (ms < 60_000) return `${Math.max(1, Math.round(ms / 1_000))} s`
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`
  return `${Math.round(ms / 86_400_000)} days`
}

/** The lines of a textarea list (CIDRs, event-name patterns), blanks dropped. */
export const lines = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean)

export function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new Error(`${field}: not valid JSON (${(err as Error).message})`)
  }
}
