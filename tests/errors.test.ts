// docs/errors.md lists every code of the catalogue, and nothing else.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { errorCatalogue } from '../core/errors.ts'

const documented = [
  ...readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8').matchAll(/^### ([A-Z_]+)$/gm),
].map((m) => m[1])

t.test('every catalogue code is documented, once, and every documented code exists', async (t) => {
  t.same([...documented].sort(), Object.keys(errorCatalogue).sort())
  t.equal(new Set(documented).size, documented.length)
})

t.test('documented HTTP statuses match the catalogue', async (t) => {
  const text = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8')
  for (const [code, spec] of Object.entries(errorCatalogue)) {
    const section = text.split(`### ${code}\n`)[1]?.split('\n###')[0] ?? ''
    const status = /^(\d{3})\./.exec(section)?.[1]
    const statusCode = 'statusCode' in spec ? spec.statusCode : undefined
    if (status || statusCode === undefined) t.equal(status && Number(status), statusCode, `${code} status`)
  }
})

t.test('the codes the client library and the runner record are in the catalogue', async (t) => {
  const { NonRetriableError } = await import('../client/errors.ts')
  t.ok(new NonRetriableError('x').code in errorCatalogue, 'NON_RETRIABLE')
  const step = readFileSync(new URL('../client/step.ts', import.meta.url), 'utf8')
  const send = readFileSync(new URL('../client/send.ts', import.meta.url), 'utf8')
  const recorded = [...`${step}${send}`.matchAll(/code: '([A-Z_]+)'|\?\? '([A-Z_]+)'/g)].map((m) => m[1] ?? m[2])
  t.same([...new Set(recorded)].sort(), ['FUNCTION_TIMEOUT', 'UNKNOWN'])
  for (const code of recorded) t.ok(code in errorCatalogue, code)
})
