// docs/rest.md, rendered from the OpenAPI document the server generates from its routes' schemas
// (api/openapi.ts): `node scripts/rest-reference.ts` writes it; tests/docs-rest.test.ts fails when it
// no longer matches what the server serves.
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

type Schema = Record<string, any>
type Operation = {
  summary?: string
  description?: string
  tags?: string[]
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: Schema; description?: string }>
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  responses: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>
  security?: unknown[]
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const cell = (text: unknown) =>
  String(text ?? '')
    .replaceAll('|', '\\|')
    .replaceAll('\n', ' ')

function typeOf(s: Schema | undefined): string {
  if (!s) return 'any'
  if (s.enum) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ')
  if (s.const !== undefined) return JSON.stringify(s.const)
  const union = s.anyOf ?? s.oneOf
  if (union) return union.map(typeOf).join(' | ')
  if (s.type === 'array') return `${typeOf(s.items)}[]`
  if (Array.isArray(s.type)) return s.type.join(' | ')
  return s.type ?? 'object'
}

function fields(schema: Schema | undefined): string[] {
  const props = schema?.properties as Record<string, Schema> | undefined
  if (!props) return []
  const required = new Set<string>(schema?.required ?? [])
  return Object.entries(props).map(
    ([name, s]) =>
      `| \`${name}\` | ${cell(typeOf(s))} | ${required.has(name) ? 'yes' : ''} | ${cell(s.description ?? '')} |`,
  )
}

export function renderRestReference(doc: { paths: Record<string, Record<string, Operation>> }): string {
  const byTag = new Map<string, string[]>()
  for (const [path, methods] of Object.entries(doc.paths))
    for (const method of METHODS) {
      const op = methods[method]
      if (!op) continue
      const out: string[] = [`### \`${method.toUpperCase()} ${path}\``, '', op.summary ?? '', '']
      if (op.description) out.push(op.description, '')
      if (op.security && op.security.length === 0) out.push('No signing key: this route authenticates by itself.', '')
      const params = op.parameters ?? []
      if (params.length > 0)
        out.push(
          '| Parameter | In | Type | Required | Meaning |',
          '|---|---|---|---|---|',
          ...params.map(
            (p) =>
              `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell(p.description ?? p.schema?.description ?? '')} |`,
          ),
          '',
        )
      const body = op.requestBody?.content?.['application/json']?.schema
      const bodyFields = fields(body)
      if (bodyFields.length > 0)
        out.push('| Body field | Type | Required | Meaning |', '|---|---|---|---|', ...bodyFields, '')
      const statuses = Object.keys(op.responses)
      const ok = statuses.filter((st) => st.startsWith('2'))
      const failed = statuses.filter((st) => !st.startsWith('2'))
      out.push(
        `Answers ${ok.map((st) => `\`${st}\``).join(', ')}; errors ${failed.map((st) => `\`${st}\``).join(', ')}.`,
        '',
      )
      const data = op.responses[ok[0]]?.content?.['application/json']?.schema?.properties?.data
      const dataFields = fields(data?.type === 'array' ? data.items : data)
      if (dataFields.length > 0)
        out.push(
          `| \`data\`${data?.type === 'array' ? '[]' : ''} field | Type | Always | Meaning |`,
          '|---|---|---|---|',
          ...dataFields,
          '',
        )
      const tag = op.tags?.[0] ?? 'Other'
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...out])
    }
  const head = [
    '# REST reference',
    '',
    '<!-- Rendered from the OpenAPI document by `node scripts/rest-reference.ts`; tests/docs-rest.test.ts keeps it',
    "     in step with the routes. Edit the routes' schemas (api/), not this file. -->",
    '',
    'Every route under `/v1` takes `Authorization: Bearer <signing key or API token>`, or a signed-in',
    "user's `sluice_session` cookie with `x-csrf-token` on changes (none in `sluice dev`; docs/teams.md),",
    'and answers JSON: `{ data, metadata }`, or `{ status, code, error }` on an error, `error` naming the field',
    '(docs/errors.md lists every code). The server serves the same document at `/v1/openapi.json` and',
    'renders it at `/docs`.',
    '',
    ...[...byTag.keys()].map(
      (tag) =>
        `- [${tag}](#${tag
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replaceAll(' ', '-')})`,
    ),
    '',
  ]
  return [...head, ...[...byTag].flatMap(([tag, lines]) => [`## ${tag}`, '', ...lines])].join('\n').trimEnd() + '\n'
}

export const REST_REFERENCE = fileURLToPath(new URL('../docs/rest.md', import.meta.url))

if (import.meta.main) {
  const { startServer } = await import('../tests/helpers/server.ts')
  const server = await startServer()
  const doc = await (await fetch(`${server.url}/v1/openapi.json`)).json()
  await writeFile(REST_REFERENCE, renderRestReference(doc))
  await server.stop()
  console.log(`wrote ${REST_REFERENCE}`)
  process.exit(0)
}
