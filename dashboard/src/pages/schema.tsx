// One event name's schema in one environment: the latest version and any earlier one, an editor to
// push the next (or the first), a draft from the stored events, and the violations counted.
import { useState } from 'preact/hooks'
import { api, ApiError, query } from '../api.ts'
import { ErrorMessage, Loading } from '../ui/common.tsx'
import { fromNow, time } from '../ui/format.ts'
import { JsonView } from '../ui/json-view.tsx'
import { useApi } from '../ui/use-api.ts'
import { SchemaDraftPanel } from './schema-draft.tsx'
import { SchemaPush } from './schema-push.tsx'
import { SchemaViolationsPanel } from './schema-violations.tsx'

interface Version {
  version: number
  schema: Record<string, unknown>
  created_at: string
}
interface StoredSchema extends Version {
  name: string
  env: string
  versions: Version[]
}

const STARTER = { type: 'object', properties: {} }
const pretty = (schema: unknown) => `${JSON.stringify(schema, null, 2)}\n`

function Versions({ doc }: { doc: StoredSchema }) {
  const [picked, setPicked] = useState<number>(doc.version)
  const shown = doc.versions.find((v) => v.version === picked) ?? doc
  return (
    <section id="schema-versions" class="panel" aria-labelledby="versions-title">
      <h2 id="versions-title">Version {shown.version}</h2>
      <label>
        Version
        <select
          id="schema-version"
          value={String(shown.version)}
          onChange={(e) => setPicked(Number(e.currentTarget.value))}
        >
          {[...doc.versions].reverse().map((v) => (
            <option key={v.version} value={String(v.version)}>
              {v.version === doc.version ? `${v.version} (latest)` : v.version}, pushed {time(v.created_at)}
            </option>
          ))}
        </select>
      </label>
      <JsonView value={shown.schema} label={`Schema version ${shown.version}`} />
    </section>
  )
}

export function SchemaPage({ name, env }: { name: string; env: string }) {
  const path = `/v1/schemas/${encodeURIComponent(name)}${query({ env })}`
  const schema = useApi(() => api<{ data: StoredSchema }>('GET', path), [path])
  const [editor, setEditor] = useState<{ text?: string; revision: number }>({ revision: 0 })
  const [pushes, setPushes] = useState(0)
  const missing = schema.error instanceof ApiError && schema.error.status === 404
  if (schema.loading && !schema.data && !schema.error) return <Loading />
  const doc = missing ? undefined : schema.data?.data
  const initial = editor.text ?? pretty(doc?.schema ?? STARTER)
  return (
    <>
      <p class="crumbs">
        <a href="#/schemas">Schemas</a> /
      </p>
      <h1 tabIndex={-1} class="break">
        {name}
      </h1>
      <p class="muted" id="schema-state">
        env {env} ·{' '}
        {doc ? (
          <>
            version {doc.version}, pushed <span title={time(doc.created_at)}>{fromNow(doc.created_at)}</span>
          </>
        ) : (
          'no schema yet: write one below or draft it from the stored events'
        )}
      </p>
      {!missing && <ErrorMessage error={schema.error} />}
      <div class="webhook-grid">
        {/* A loaded draft starts the editor afresh; after a push it keeps what was pushed. */}
        <SchemaPush
          key={editor.revision}
          name={name}
          env={env}
          initial={initial}
          latestVersion={doc?.version}
          onPushed={() => {
            setPushes((n) => n + 1)
            schema.reload()
          }}
        />
        {doc && <Versions key={doc.version} doc={doc} />}
      </div>
      <SchemaDraftPanel
        name={name}
        env={env}
        onLoad={(draft) => setEditor((e) => ({ text: pretty(draft), revision: e.revision + 1 }))}
      />
      <SchemaViolationsPanel name={name} env={env} refresh={pushes} />
    </>
  )
}
