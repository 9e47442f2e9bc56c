// The Insights SQL console's own check of a statement (store/insights-sql.ts), before ClickHouse's
// readonly = 1: one read statement, told apart from what hides in strings and comments.
import t from 'tap'
import { capRows, readStatement, userPositions, WRAP_HEAD } from '../../store/insights-sql.ts'

t.test('one SELECT or WITH statement passes, without its final ";"', async (t) => {
  t.equal(readStatement('SELECT 1;'), 'SELECT 1')
  t.equal(readStatement('  -- events\nselect name FROM events ; -- done\n'), '  -- events\nselect name FROM events ')
  t.equal(readStatement('WITH 1 AS x SELECT x'), 'WITH 1 AS x SELECT x')
  t.equal(readStatement('(SELECT 1)'), '(SELECT 1)')
  t.equal(
    readStatement("SELECT ';' AS semicolon, 'DROP TABLE x; --' AS s"),
    "SELECT ';' AS semicolon, 'DROP TABLE x; --' AS s",
  )
  t.equal(readStatement("SELECT 'it''s', \"col;\" FROM `t;`"), "SELECT 'it''s', \"col;\" FROM `t;`")
  t.equal(readStatement('SELECT 1 /* ; DROP */'), 'SELECT 1 /* ; DROP */')
  t.equal(readStatement('SELECT settings FROM t'), 'SELECT settings FROM t', 'a column named settings')
})

t.test('anything else is REQUEST_INVALID naming body.sql', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['', /empty/],
    ['-- only a comment', /empty/],
    ['INSERT INTO events VALUES (1)', /not INSERT/],
    ['DROP TABLE events', /not DROP/],
    ['SELECT 1; DROP TABLE events', /one statement/],
    ['SELECT 1;;', /one statement/],
    ["SELECT 'a'; SELECT 'b'", /one statement/],
    ['SET readonly = 0', /not SET/],
    ['SELECT (1', /unbalanced/],
    ['SELECT 1) UNION ALL (SELECT 2', /unbalanced/],
    ['SELECT * FROM events SETTINGS max_result_rows = 0', /settings/],
    ['SELECT 1 FORMAT TSV', /FORMAT/],
    ['EXPLAIN SELECT 1', /not EXPLAIN/],
  ]
  for (const [sql, message] of refused) {
    t.throws(() => readStatement(sql), { code: 'REQUEST_INVALID', message }, JSON.stringify(sql))
    t.throws(() => readStatement(sql), { message: /^body\.sql: / })
  }
})

t.test("the row cap's wrapper, and ClickHouse's positions moved back to the user's text", async (t) => {
  t.equal(capRows('SELECT 1', 10), `${WRAP_HEAD}SELECT 1\n) LIMIT 11`)
  t.equal(
    userPositions(`Syntax error: failed at position ${WRAP_HEAD.length + 8} (line 2, col 8): FROM`),
    'Syntax error: failed at position 8 (line 1, col 8): FROM',
  )
})
