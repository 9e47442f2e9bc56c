// "Draft from traffic": a schema the server infers from the name's stored events, shown as its
// changes to the current version; loading it puts it in the editor, and only a push saves it.
import { useState } from 'preact/hooks'
import { ErrorMessage } from '../ui/common.tsx'
import { JsonView } from '../ui/json-view.tsx'
import { draftSchema, type SchemaChange, type SchemaDraft } from './schema-traffic-api.ts'

const OP_CLASS: Record<SchemaChange['op'], string> = { add: 'good', remove: 'bad', change: 'warn' }
const shown = (value: unknown) => {
  const text = JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

function Change({ change }: { change: SchemaChange }) {
  return (
    <li data-op={change.op}>
      <span class={`badge ${OP_CLASS[change.op]}`}>{change.op}</span>
      <code class="break">{change.path}</code>
      {'from' in change && (
        <>
          {' '}
          <span class="muted">from</span> <code class="break">{shown(change.from)}</code>
        </>
      )}
      {'to' in change && (
        <>
          {' '}
          <span class="muted">to</span> <code class="break">{shown(change.to)}</code>
        </>
      )}
    </li>
  )
}

export function SchemaDraftPanel(props: { name: string; env: string; onLoad(schema: Record<string, unknown>): void }) {
  const [state, setState] = useState<{ draft?: SchemaDraft; error?: Error; busy?: boolean }>({})
  const draft = () => {
    setState({ busy: true })
    draftSchema(props.name, props.env).then(
      (result) => setState({ draft: result }),
      (error: Error) => setState({ error }),
    )
  }
  const d = state.draft
  return (
    <section id="schema-draft" class="panel" aria-labelledby="draft-title">
      <h2 id="draft-title">Draft from traffic</h2>
      <p class="muted small-text">
        Proposes a schema from the stored events of this name (types, required fields, enums, formats). Nothing is saved
        until you push it.
      </p>
      <button type="button" id="draft-schema" disabled={state.busy} onClick={draft}>
        {d ? 'Draft again' : 'Draft from traffic'}
      </button>
      <div id="draft-result" aria-live="polite">
        <ErrorMessage error={state.error} />
        {d && (
          <>
            <p>
              From {d.sampled.toLocaleString()} event{d.sampled === 1 ? '' : 's'}
              {d.current ? `, against version ${d.current.version}` : ', no current version'}:{' '}
              {d.diff.length === 0 ? 'no change.' : `${d.diff.length} change${d.diff.length === 1 ? '' : 's'}.`}
            </p>
            {d.diff.length > 0 && (
              <ul id="draft-diff" class="diff">
                {d.diff.map((change) => (
                  <Change key={`${change.op}${change.path}`} change={change} />
                ))}
              </ul>
            )}
            <JsonView value={d.schema} label="Proposed schema" />
            <button type="button" id="load-draft" class="secondary" onClick={() => props.onLoad(d.schema)}>
              Load into the editor
            </button>
          </>
        )}
      </div>
    </section>
  )
}
