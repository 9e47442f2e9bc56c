// SQL values for ClickHouse. Event names, dedup ids and cursors come straight from HTTP
// query strings, so no value is ever interpolated bare: on current releases it travels as a
// query parameter, and on 18.16, which has none over HTTP, as a literal from these functions.

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
  if (!PLAIN_IDENTIFIER.test(name))
    throw new RangeError(`sqlIdentifier: ${JSON.stringify(name)} must match ${PLAIN_IDENTIFIER}`)
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

/**
 * The values of one query. On a server that takes query parameters over HTTP (current
 * releases) each value is a `{pN:Type}` placeholder sent beside the query in `params`, so
 * no value is ever part of the SQL text; on 18.16, which has none, it is a literal written
 * by the functions above. One query text serves both: stores build it once through this.
 */
export interface SqlValues {
  string(value: string): string
  int(value: number): string
  /** The query_params to send with the query; empty when values are literals. */
  readonly params: Record<string, string | number>
}

export function sqlValues(useParams: boolean): SqlValues {
  const params: Record<string, string | number> = {}
  const bind = (value: string | number, type: string) => {
    const name = `p${Object.keys(params).length}`
    params[name] = value
    return `{${name}:${type}}`
  }
  return {
    params,
    string(value) {
      const literal = sqlString(value) // also refuses a non-string on either path
      return useParams ? bind(value, 'String') : literal
    },
    int(value) {
      const literal = sqlInt(value)
      return useParams ? bind(value, 'Int64') : literal
    },
  }
}
