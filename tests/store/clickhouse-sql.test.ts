// The SQL literal helpers: every hostile string comes back from a real ClickHouse exactly as
// sent, and nothing but a plain name or a safe integer is ever accepted where those go.
import t from 'tap'
import { createClient } from '@clickhouse/client'
import { sqlIdentifier, sqlInt, sqlString, whereClause } from '../../store/clickhouse-sql.ts'
import { testServices } from '../infra/services.ts'
import { HOSTILE_STRINGS } from '../helpers/hostile-strings.ts'

t.test('sqlString escapes backslashes, quotes and NUL', async (t) => {
  t.equal(sqlString("it's"), "'it\\'s'")
  t.equal(sqlString('a\\b'), "'a\\\\b'")
  t.equal(sqlString("\\'"), "'\\\\\\''", 'a backslash before a quote cannot escape the escaping')
  t.equal(sqlString('a\0b'), "'a\\0b'")
  t.throws(() => sqlString(42 as unknown as string), TypeError)
})

t.test('every hostile string round-trips through a real server unchanged', async (t) => {
  const client = createClient({ url: testServices().clickhouseUrl })
  t.teardown(() => client.close())
  for (const value of HOSTILE_STRINGS) {
    const result = await client.query({
      query: `SELECT ${sqlString(value)} AS v, length(${sqlString(value)}) AS n`,
      format: 'JSONEachRow',
    })
    const rows = await result.json<{ v: string; n: number | string }>()
    t.same(rows, [{ v: value, n: rows[0]?.n }], JSON.stringify(value))
    t.equal(Number(rows[0].n), Buffer.byteLength(value), `${JSON.stringify(value)}: byte length`)
  }
})

t.test('sqlIdentifier back-quotes plain names and refuses anything else', async (t) => {
  t.equal(sqlIdentifier('sluice_prod'), '`sluice_prod`')
  t.equal(sqlIdentifier('_x1'), '`_x1`')
  for (const bad of ['', '1abc', 'a-b', 'a.b', 'a`b', 'x; DROP DATABASE y', 'é', 'a b'])
    t.throws(() => sqlIdentifier(bad), RangeError, JSON.stringify(bad))
})

t.test('sqlInt writes safe integers and refuses the rest', async (t) => {
  t.equal(sqlInt(0), '0')
  t.equal(sqlInt(-5), '-5')
  t.equal(sqlInt(Number.MAX_SAFE_INTEGER), '9007199254740991')
  for (const bad of [NaN, Infinity, 1.5, 2 ** 60, '1 OR 1=1' as unknown as number])
    t.throws(() => sqlInt(bad), RangeError, String(bad))
})

t.test('whereClause parenthesises each condition', async (t) => {
  t.equal(whereClause([]), '')
  t.equal(whereClause(['a = 1 OR b = 2', 'c = 3']), 'WHERE (a = 1 OR b = 2) AND (c = 3)')
})
