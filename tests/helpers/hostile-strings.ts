// Strings that try to break out of a SQL string literal, for every filter a request can set.
export const HOSTILE_STRINGS: readonly string[] = [
  "x' OR 1=1 --",
  "' OR '1'='1",
  "\\' OR 1=1 --",
  'x\\',
  '\\',
  "\\\\'",
  "'; DROP TABLE events; --",
  'a\0b',
  'tab\there\nnewline\rreturn',
  '`backquote` "double"',
  '%_*?',
  'émoji 😀 中文',
  '\\x27\\u0027',
  "' UNION ALL SELECT 1 --",
]
