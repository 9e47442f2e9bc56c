// `sluice schemas draft NAME`: the schema the server proposes from the name's stored events, on
// stdout (or --out FILE) so that `sluice schemas push NAME FILE` saves it; its diff to the current
// version on stderr, for review first.
import { writeFile } from 'node:fs/promises'
import { callJson, type Target } from './api-json.ts'

export interface DraftOptions {
  env?: string
  limit?: string
  since?: string
  out?: string
}

interface Change {
  op: 'add' | 'remove' | 'change'
  path: string
  from?: unknown
  to?: unknown
}

const shown = (value: unknown) => JSON.stringify(value)

function changeLine(c: Change): string {
  if (c.op === 'add') return `  + ${c.path}: ${shown(c.to)}`
  if (c.op === 'remove') return `  - ${c.path}: ${shown(c.from)}`
  return `  ~ ${c.path}: ${shown(c.from)} -> ${shown(c.to)}`
}

export async function schemasDraftCommand(target: Target, name: string, options: DraftOptions): Promise<number> {
  const env = options.env ?? 'production'
  const limit = options.limit === undefined ? undefined : Number(options.limit)
  const since =
    options.since === undefined ? undefined : /^\d+$/.test(options.since) ? Number(options.since) : options.since
  const path = `/v1/schemas/${encodeURIComponent(name)}/draft?env=${encodeURIComponent(env)}`
  const answer = await callJson(target, 'POST', path, {
    ...(limit !== undefined && { limit }),
    ...(since !== undefined && { since }),
  })
  if (!answer.ok) {
    process.stderr.write(`${answer.text}\n`)
    return 1
  }
  const draft = (answer.body as { data: unknown }).data as {
    sampled: number
    schema: unknown
    current: { version: number } | null
    diff: Change[]
  }
  const against = draft.current ? `version ${draft.current.version}` : 'no schema yet'
  const changes = draft.diff.length === 0 ? ['  (no changes)'] : draft.diff.map(changeLine)
  process.stderr.write(`drafted "${name}" in ${env} from ${draft.sampled} events; against ${against}:\n`)
  process.stderr.write(`${changes.join('\n')}\n`)
  const text = `${JSON.stringify(draft.schema, null, 2)}\n`
  if (options.out === undefined) process.stdout.write(text)
  else {
    await writeFile(options.out, text)
    process.stderr.write(`wrote ${options.out}: review it, then sluice schemas push ${name} ${options.out}\n`)
  }
  return 0
}
