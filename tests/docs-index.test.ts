// docs/README.md is the index of the docs: every page under docs/ is linked from it, and every link
// in it leads to a page that exists.
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './helpers/server.ts'

t.test('every docs page is in the index, and every link of the index resolves', async (t) => {
  const docs = join(ROOT, 'docs')
  const index = readFileSync(join(docs, 'README.md'), 'utf8')
  const links = [...index.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1])
  for (const page of readdirSync(docs).filter((f) => f.endsWith('.md') && f !== 'README.md'))
    t.ok(links.includes(page), `docs/${page} is in docs/README.md`)
  for (const link of links) t.ok(existsSync(join(docs, link)), `${link} exists`)
})
