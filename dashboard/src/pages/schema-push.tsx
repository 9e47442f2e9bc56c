// Pushing a new version of a name's schema from a JSON editor. A refused push (SCHEMA_INVALID,
// SCHEMA_BREAKING_CHANGE, …) is shown with the pointer the server named, and that line is marked.
import { useState } from 'preact/hooks'
import { api, ApiError, query } from '../api.ts'
import { Ok } from '../ui/common.tsx'
import { parseJson } from '../ui/format.ts'
import { CodeEditor, type Problem } from '../ui/lazy-editor.tsx'

export interface Refusal {
  /** The server's error code; '' for a schema the page could not send (not JSON). */
  code: string
  /** A JSON pointer into the schema; '' when the server named none (the registry's refusals). */
  pointer: string
  message: string
}

/** Server messages start `schema<pointer>: ` (control/schemas.ts); the rest is the rule. */
export function refusalOf(error: Error): Refusal {
  const code = error instanceof ApiError ? error.code : ''
  const text = code ? error.message.slice(code.length + 2) : error.message
  const at = /^schema(\/[^:\s]*)?: /.exec(text)
  return { code, pointer: at?.[1] ?? '', message: at ? text.slice(at[0].length) : text }
}

const unescapeSegment = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~')

/**
 * The 1-based line of `pointer` in pretty-printed JSON: each key found after the previous one (array
 * indexes keep the line reached). Good enough to point at, not a JSON parser: undefined if a key is missing.
 */
export function lineOfPointer(text: string, pointer: string): number | undefined {
  let from = 0
  for (const segment of pointer.split('/').slice(1)) {
    if (/^\d+$/.test(segment)) continue
    const found = text.indexOf(`${JSON.stringify(unescapeSegment(segment))}:`, from)
    const spaced = found < 0 ? text.indexOf(`${JSON.stringify(unescapeSegment(segment))} :`, from) : found
    if (spaced < 0) return undefined
    from = spaced + 1
  }
  return from === 0 ? undefined : text.slice(0, from).split('\n').length
}

export function SchemaPush(props: {
  name: string
  env: string
  /** What the editor starts with (the parent's `key` changes to put in another: a loaded draft). */
  initial: string
  latestVersion?: number
  onPushed(version: number): void
}) {
  const [text, setText] = useState(props.initial)
  const [result, setResult] = useState<{ version?: number; unchanged?: boolean; refusal?: Refusal }>({})
  const [busy, setBusy] = useState(false)
  const push = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setResult({})
    try {
      const schema = parseJson(text, 'schema')
      const path = `/v1/schemas/${encodeURIComponent(props.name)}${query({ env: props.env })}`
      const { data } = await api<{ data: { version: number } }>('PUT', path, { schema })
      setResult({ version: data.version, unchanged: data.version === props.latestVersion })
      props.onPushed(data.version)
    } catch (error) {
      setResult({ refusal: refusalOf(error as Error) })
    } finally {
      setBusy(false)
    }
  }
  const refusal = result.refusal
  const line = refusal?.pointer ? lineOfPointer(text, refusal.pointer) : undefined
  const problem: Problem | null = refusal
    ? { message: [refusal.code, refusal.message].filter(Boolean).join(': '), line }
    : null
  return (
    <form id="push-schema" class="panel" onSubmit={push} aria-labelledby="push-title">
      <h2 id="push-title">{props.latestVersion ? 'Push a new version' : 'Push the first version'}</h2>
      <p class="muted small-text">
        JSON Schema (draft 2020-12) for <code>data</code>. A new version may not refuse what the previous one accepted.
      </p>
      <CodeEditor
        id="schema-editor"
        label="Schema (JSON)"
        language="json"
        value={props.initial}
        minLines={10}
        problem={problem}
        onChange={(value) => {
          setText(value)
          setResult({})
        }}
      />
      <button type="submit" id="push-schema-button" disabled={busy}>
        Push
      </button>
      <div id="push-status" aria-live="polite">
        {result.version !== undefined && (
          <Ok>
            {result.unchanged
              ? `Unchanged: the same as version ${result.version}.`
              : `Stored version ${result.version}.`}
          </Ok>
        )}
        {refusal && (
          <p class="error" role="alert" data-code={refusal.code}>
            {refusal.code && <code>{refusal.code}</code>}
            {refusal.pointer && (
              <>
                {' '}
                at <code class="pointer">{refusal.pointer}</code>
                {line !== undefined && ` (line ${line})`}
              </>
            )}
            {refusal.code && ': '}
            {refusal.message}
          </p>
        )}
      </div>
    </form>
  )
}
