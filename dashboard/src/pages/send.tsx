// Send any event to a Dev Server's Event API from the browser (CORS is open on /e/* in dev mode).
import { useState } from 'preact/hooks'
import { ErrorMessage, Ok } from '../ui/common.tsx'
import { parseJson } from '../ui/format.ts'

const DEV_SERVER = 'sluice.devServer'

export function SendPage() {
  const saved = JSON.parse(localStorage.getItem(DEV_SERVER) ?? '{}')
  const [result, setResult] = useState<{ ok?: string; error?: string }>({})
  const send = async (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const server = String(form.get('server')).trim().replace(/\/$/, '')
    setResult({})
    try {
      const event = parseJson(String(form.get('event')), 'event')
      localStorage.setItem(DEV_SERVER, JSON.stringify({ ...saved, url: server }))
      const response = await fetch(`${server}/e/${encodeURIComponent(saved.key ?? 'dev')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
      })
      const body = await response.json()
      setResult(response.ok ? { ok: `Sent: ${body.ids.join(', ')}` } : { error: `${body.code}: ${body.error}` })
    } catch (err) {
      setResult({ error: (err as Error).message })
    }
  }
  return (
    <>
      <h1 tabIndex={-1}>Send an event to a Dev Server</h1>
      <form id="send" class="panel" onSubmit={send} aria-label="Send an event">
        <label>
          Dev Server
          <input type="url" name="server" value={saved.url ?? 'http://localhost:8288'} />
        </label>
        <label>
          Event
          <textarea name="event" rows={6}>
            {'{\n  "name": "app/user.signed-up",\n  "data": { "plan": "pro" }\n}'}
          </textarea>
        </label>
        <button type="submit">Send</button>
        <div id="send-result">
          {result.ok && <Ok>{result.ok}</Ok>}
          <ErrorMessage error={result.error} />
        </div>
      </form>
    </>
  )
}
