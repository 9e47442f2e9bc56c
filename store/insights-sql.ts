// What the Insights SQL console accepts before ClickHouse sees it: one read statement (SELECT, or
// WITH … SELECT), nothing after a `;`, balanced parentheses. ClickHouse's `readonly = 1` is what
// actually forbids writes, settings and table functions; this check answers the common mistakes
// with a clear message, and keeps the statement fit for the subquery the row cap wraps it in.
import { SluiceError } from '../core/errors.ts'

const invalid = (message: string) => new SluiceError('REQUEST_INVALID', `body.sql: ${message}`)

/** The statement without comments' effect on structure: its first word and where `;`/parentheses fall. */
interface Scan {
  firstWord: string
  /** Offset of a `;` outside strings and comments that is followed by more than blanks and comments. */
  innerSemicolon?: number
  /** The text up to a final `;` (kept: comments, strings, everything else). */
  body: string
  /** The text with strings, quoted names and comments blanked out: what is left is keywords and names. */
  code: string
  unbalanced: boolean
}

function scan(sql: string): Scan {
  let firstWord = ''
  let depth = 0
  let unbalanced = false
  let semicolon: number | undefined
  let innerSemicolon: number | undefined
  let code = ''
  for (let i = 0; i < sql.length; ) {
    const c = sql[i]
    const next = sql[i + 1]
    const skip = (end: number) => {
      code += ' '
      return end
    }
    if (c === '-' && next === '-') i = skip(lineEnd(sql, i))
    else if (c === '#' && (next === ' ' || next === '!')) i = skip(lineEnd(sql, i))
    else if (c === '/' && next === '*')
      i = skip(sql.indexOf('*/', i + 2) < 0 ? sql.length : sql.indexOf('*/', i + 2) + 2)
    else if (c === "'" || c === '"' || c === '`') i = skip(quoteEnd(sql, i, c))
    else if (/\s/.test(c)) {
      code += ' '
      i++
    } else {
      code += c
      if (semicolon !== undefined && innerSemicolon === undefined) innerSemicolon = semicolon
      if (c === ';') semicolon = i
      else if (c === '(') depth++
      else if (c === ')' && --depth < 0) unbalanced = true
      if (firstWord === '' && /[A-Za-z_]/.test(c)) firstWord = /^[A-Za-z_]\w*/.exec(sql.slice(i))![0].toUpperCase()
      else if (firstWord === '' && c !== '(') firstWord = c
      i++
    }
  }
  const body = semicolon !== undefined && innerSemicolon === undefined ? sql.slice(0, semicolon) : sql
  return { firstWord, innerSemicolon, body, code, unbalanced: unbalanced || depth !== 0 }
}

const lineEnd = (sql: string, i: number) => {
  const end = sql.indexOf('\n', i)
  return end < 0 ? sql.length : end + 1
}

/** Past the closing quote; a backslash escapes the next character, and a doubled quote is one. */
function quoteEnd(sql: string, start: number, quote: string): number {
  for (let i = start + 1; i < sql.length; i++) {
    if (sql[i] === '\\') i++
    else if (sql[i] === quote) {
      if (sql[i + 1] !== quote) return i + 1
      i++
    }
  }
  return sql.length
}

/**
 * The statement to run: `sql` without a final `;`. Throws REQUEST_INVALID naming body.sql for
 * anything but one SELECT (WITH … SELECT) statement.
 */
export function readStatement(sql: string): string {
  const s = scan(sql)
  if (s.firstWord === '') throw invalid('empty: write one SELECT query')
  if (s.innerSemicolon !== undefined) throw invalid('one statement only: nothing may follow a ";"')
  if (s.firstWord !== 'SELECT' && s.firstWord !== 'WITH')
    throw invalid(`only a read query (SELECT or WITH … SELECT) is allowed, not ${s.firstWord}`)
  if (s.unbalanced) throw invalid('unbalanced parentheses')
  // readonly = 1 refuses a SETTINGS clause on 18.16; current releases ignore one in the subquery
  // the row cap wraps the statement in. Either way it could not raise a cap: said plainly here.
  if (/\bSETTINGS\s+[A-Za-z_]\w*\s*=/i.test(s.code))
    throw invalid("a query may not change settings (SETTINGS …): the server's caps apply")
  if (/\bFORMAT\s+[A-Za-z_]\w*\s*;?\s*$/i.test(s.code)) throw invalid('leave out FORMAT: the answer is JSON')
  return s.body
}

/**
 * The statement inside the query that caps its rows: an outer LIMIT is exact (ClickHouse's
 * max_result_rows with `break` stops only at a block boundary, tens of thousands of rows on).
 * The user's text starts on the second line, so positions in ClickHouse's messages move by one line.
 */
export const WRAP_HEAD = 'SELECT * FROM (\n'
export function capRows(statement: string, maxRows: number): string {
  return `${WRAP_HEAD}${statement}\n) LIMIT ${maxRows + 1}`
}

/** ClickHouse's message about the wrapped query, with its positions moved back to the user's text. */
export function userPositions(message: string): string {
  return message
    .replace(/\(line (\d+), col (\d+)\)/g, (_m, line, col) => `(line ${Math.max(1, Number(line) - 1)}, col ${col})`)
    .replace(/position (\d+)/g, (_m, p) => `position ${Math.max(1, Number(p) - WRAP_HEAD.length)}`)
}
