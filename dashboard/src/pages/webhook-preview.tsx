// A webhook's preview: a sample body and headers through the server's own pipeline (same sandbox
// and validation as deliveries), run again as the transform or the sample changes.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ErrorMessage } from '../ui/common.tsx'
import { CodeEditor, type Problem } from '../ui/lazy-editor.tsx'
import { JsonView } from '../ui/json-view.tsx'

const DEBOUNCE_MS = 400
const SAMPLE = '{\n  "type": "invoice.paid",\n  "id": "evt_1"\n}'

/**
 * The server says where in the transform an error happened (`line`, `column`: a compile error, or
 * an error thrown at run time); a compile error's message also ends in `[transform:<key>:<line>:<column>]`.
 */
export function problemOf(error: { code: string; message: string; line?: number; column?: number }): Problem {
  const at = /\s*\[transform:[^\]]*:(\d+):(\d+)\]$/.exec(error.message)
  const message = `${error.code}: ${at ? error.message.slice(0, at.index) : error.message}`
  const line = error.line ?? (at ? Number(at[1]) : undefined)
  const column = error.column ?? (at ? Number(at[2]) : undefined)
  return line === undefined ? { message } : { message: `${message} (line ${line})`, line, column }
}

function parse(text: string, field: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(text) }
  } catch (err) {
    return { error: `${field}: not valid JSON (${(err as Error).message})` }
  }
}

export function Preview({
  webhookId,
  transform,
  onProblem,
}: {
  webhookId: string
  transform: string
  onProblem(p: Problem | null): void
}) {
  const [payload, setPayload] = useState(SAMPLE)
  const [headers, setHeaders] = useState('{}')
  const [result, setResult] = useState<{ events?: unknown[]; error?: string; pending?: boolean }>({ pending: true })
  const [runs, setRuns] = useState(0)
  // The first preview and one asked for with "Run preview" run at once; an edit waits until typing
  // pauses, so each keystroke does not run the transform on the server.
  const now = useRef(true)
  useEffect(() => {
    let current = true
    const delay = now.current ? 0 : DEBOUNCE_MS
    now.current = false
    const timer = setTimeout(async () => {
      const body = parse(payload, 'payload')
      const head = parse(headers, 'headers')
      if (body.error || head.error) return setResult({ error: body.error ?? head.error })
      try {
        const { data } = await api('POST', `/v1/webhooks/${webhookId}/preview`, {
          payload: body.value,
          headers: head.value,
          transform: transform.trim() === '' ? null : transform,
        })
        if (!current) return
        const problem = data.ok ? null : problemOf(data.error)
        onProblem(problem)
        setResult(data.ok ? { events: data.events } : { error: problem!.message })
      } catch (err) {
        if (current) setResult({ error: (err as Error).message })
      }
    }, delay)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [transform, payload, headers, runs])
  return (
    <section id="preview" class="panel" aria-labelledby="preview-title">
      <h2 id="preview-title">
        Preview <span class="muted small-text">runs as you type</span>
      </h2>
      <div class="label">Incoming payload (JSON)</div>
      <CodeEditor
        id="preview-payload"
        label="Incoming payload (JSON)"
        language="json"
        value={payload}
        onChange={setPayload}
        minLines={5}
      />
      <div class="label">Headers (JSON)</div>
      <CodeEditor
        id="preview-headers"
        label="Headers (JSON)"
        language="json"
        value={headers}
        onChange={setHeaders}
        minLines={2}
      />
      <button
        type="button"
        id="run-preview"
        onClick={() => {
          now.current = true
          setRuns((n) => n + 1)
        }}
      >
        Run preview
      </button>
      <div id="preview-result" aria-live="polite">
        {result.pending ? null : result.error ? (
          <ErrorMessage error={result.error} />
        ) : (
          <>
            <p class="ok">
              {result.events!.length === 0
                ? 'No event: this request would be accepted and dropped.'
                : `${result.events!.length} event${result.events!.length === 1 ? '' : 's'}:`}
            </p>
            <JsonView value={result.events} label="Preview events" />
          </>
        )}
      </div>
    </section>
  )
}
