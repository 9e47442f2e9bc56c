// SQL literals for ClickHouse. The server we must support (18.16) has no query parameters
// over HTTP, so every value reaches SQL through these three functions, never by bare
// interpolation: event names, dedup ids and cursors come straight from HTTP query strings.

/**
 * A single-quoted string literal. Inside quotes ClickHouse treats backslash as an escape
 * character, so backslash must be doubled before quotes are escaped; NUL is written as
 * `\0` so that no raw control byte ever reaches the query text.
 */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`sqlString: expected a string, got ${typeof value}`)
  return "'" + value.replace(/[\\'\0]/g, (c) => (c === '\0' ? '\\0' : '\\' + c)) + "'"
}

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * A database or table name, back-quoted. Names come from configuration, not requests, so
 * anything beyond letters, digits and underscores is refused outright rather than escaped:
 * such a name would also be a pain for every analyst typing it.
 */
export function sqlIdentifier(name: string): string {
  if (!PLAIN_IDENTIFIER.test(name)) throw new RangeError(`sqlIdentifier: ${JSON.stringify(name)} must match ${PLAIN_IDENTIFIER}`)
  return '`' + name + '`'
}

/** An integer literal; NaN, Infinity, fractions and unsafe integers are bugs upstream. */
export function sqlInt(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`sqlInt: ${value} is not a safe integer`)
  return String(value)
}

/** `WHERE a AND b …`, or nothing when there are no conditions. */
export function whereClause(conditions: string[]): string {
  return conditions.length === 0 ? '' : 'WHERE ' + conditions.map((c) => `(${c})`).join(' AND ')
}
