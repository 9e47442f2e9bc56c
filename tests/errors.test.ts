// docs/errors.md lists every code of the catalogue, and nothing else.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { errorCatalogue } from '../core/errors.ts'

const documented = [...readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8').matchAll(/^### ([A-Z_]+)$/gm)].map((m) => m[1])

t.test('every catalogue code is documented, once, and every documented code exists', async (t) => {
  t.same([...documented].sort(), Object.keys(errorCatalogue).sort())
  t.equal(new Set(documented).size, documented.length)
})

t.test('documented HTTP statuses match the catalogue', async (t) => {
  const text = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8')
  for (const [code, spec] of Object.entries(errorCatalogue)) {
    const section = text.split(`### ${code}\n`)[1]?.split('\n###')[0] ?? ''
    const status = /^(\d{3})\./.exec(section)?.[1]
    if (status) t.equal(Number(status), spec.statusCode, `${code} status`)
  }
})
