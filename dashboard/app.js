// The Sluice dashboard: plain DOM, no build step. It only calls the REST API (/v1) and, for
// "Send event", a Dev Server's Event API. User data is always set as text, never as HTML.
const view = document.getElementById('view')
const keyInput = document.getElementById('signing-key')
keyInput.value = sessionStorage.getItem('sluice.signingKey') ?? ''
keyInput.addEventListener('change', () => { sessionStorage.setItem('sluice.signingKey', keyInput.value); route() })

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? '' : v)
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c))
  return el
}
const json = (value) => h('pre', {}, JSON.stringify(value, null, 2))
const time = (ms) => (typeof ms === 'number' ? new Date(ms).toLocaleString() : ms ? new Date(ms).toLocaleString() : '')
const message = (text, cls = 'error') => h('p', { class: cls, role: cls === 'error' ? 'alert' : 'status' }, text)

async function api(method, path, body) {
  const headers = { ...(body !== undefined && { 'content-type': 'application/json' }), ...(keyInput.value && { authorization: `Bearer ${keyInput.value}` }) }
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const payload = await response.json().catch(() => ({}))
  if (!response.ok) throw new Error(`${payload.code ?? response.status}: ${payload.error ?? response.statusText}`)
  return payload
}

function show(...nodes) { view.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined)) }
async function guarded(fn) {
  try { await fn() } catch (err) { view.prepend(message(err.message)) }
}
function parseJson(text, field) {
  try { return JSON.parse(text) } catch (err) { throw new Error(`${field}: not valid JSON (${err.message})`) }
}
const lines = (text) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean)

// Events: newest first, filter by name, click for the stored event and its runs.
async function eventsView(params) {
  const name = params.get('name') ?? ''
  const detail = h('div', { id: 'event-detail' })
  const filter = h('form', { onsubmit: (e) => { e.preventDefault(); location.hash = `#/events?name=${encodeURIComponent(e.target.name.value)}` } },
    h('label', {}, 'Event name ', h('input', { type: 'text', name: 'name', value: name, placeholder: 'app/user.created' })), h('button', {}, 'Filter'))
  const { data, metadata } = await api('GET', `/v1/events?limit=100${name ? `&name=${encodeURIComponent(name)}` : ''}`)
  const rows = data.map((e) => h('tr', { class: 'clickable', 'data-id': e.internal_id, onclick: () => guarded(() => eventDetail(e, detail)) },
    h('td', {}, e.name), h('td', {}, e.id), h('td', {}, e.env), h('td', {}, e.source.kind), h('td', {}, time(e.received_at))))
  show(h('h1', {}, 'Events'), filter, h('div', { class: 'row' },
    h('table', { id: 'events' }, h('thead', {}, h('tr', {}, ['Name', 'ID', 'Env', 'Source', 'Received'].map((c) => h('th', {}, c)))), h('tbody', {}, rows)),
    detail), data.length === 0 ? h('p', { class: 'muted' }, 'No events yet. Send one from "Send event".') : null,
    metadata.cursor ? h('p', { class: 'muted' }, 'Showing the newest 100.') : null)
}
async function eventDetail(event, into) {
  const runs = await api('GET', `/v1/events/${event.internal_id}/runs`).then((r) => r.data, () => [])
  into.replaceChildren(h('h2', {}, event.name), json(event), h('h3', {}, `Runs (${runs.length})`),
    ...runs.map((r) => h('p', {}, `${r.function_id ?? r.function ?? ''} — ${r.status}`)))
}

// Webhooks: list and create; one webhook: transform editor, lists, preview, failed requests.
async function webhooksView() {
  const { data } = await api('GET', '/v1/webhooks')
  const create = h('form', { id: 'create-webhook', onsubmit: (e) => guarded(async () => {
    e.preventDefault()
    const { data: w } = await api('POST', '/v1/webhooks', { name: e.target.name.value, env: e.target.env.value || undefined })
    location.hash = `#/webhooks/${w.id}`
  }) }, h('label', {}, 'Name ', h('input', { type: 'text', name: 'name', required: true, placeholder: 'stripe' })),
  h('label', {}, 'Environment ', h('input', { type: 'text', name: 'env', placeholder: 'production' })), h('button', {}, 'Create webhook'))
  show(h('h1', {}, 'Webhooks'), create, h('table', { id: 'webhooks' },
    h('thead', {}, h('tr', {}, ['Name', 'Env', 'URL', ''].map((c) => h('th', {}, c)))),
    h('tbody', {}, data.map((w) => h('tr', {}, h('td', {}, h('a', { href: `#/webhooks/${w.id}` }, w.name)), h('td', {}, w.env), h('td', {}, h('code', {}, w.url)), h('td', {}, w.disabled ? 'disabled' : ''))))))
}
async function webhookView(id) {
  const { data: w } = await api('GET', `/v1/webhooks/${id}`)
  const result = h('div', { id: 'preview-result' })
  const status = h('div', { id: 'save-status' })
  const editor = h('form', { id: 'edit-webhook', onsubmit: (e) => guarded(async () => {
    e.preventDefault()
    const f = e.target
    await api('PATCH', `/v1/webhooks/${id}`, {
      name: f.name.value, transform: f.transform.value.trim() === '' ? null : f.transform.value,
      allow_ips: lines(f.allow_ips.value), deny_ips: lines(f.deny_ips.value), allow_events: lines(f.allow_events.value), deny_events: lines(f.deny_events.value),
    })
    status.replaceChildren(message('Saved.', 'ok'))
  }) },
  h('label', {}, 'Name ', h('input', { type: 'text', name: 'name', value: w.name })),
  h('label', {}, 'Transform', h('textarea', { name: 'transform', spellcheck: 'false', placeholder: 'function transform(evt, headers, queryParams, raw) {\n  return { name: "stripe/" + evt.type, data: evt, id: evt.id }\n}' }, w.transform ?? '')),
  h('div', { class: 'row' },
    h('label', {}, 'Allowed IPs (CIDR)', h('textarea', { name: 'allow_ips' }, w.allow_ips.join('\n'))),
    h('label', {}, 'Denied IPs (CIDR)', h('textarea', { name: 'deny_ips' }, w.deny_ips.join('\n'))),
    h('label', {}, 'Allowed event names (* wildcards)', h('textarea', { name: 'allow_events' }, w.allow_events.join('\n'))),
    h('label', {}, 'Denied event names', h('textarea', { name: 'deny_events' }, w.deny_events.join('\n')))),
  h('button', {}, 'Save'), status)
  const preview = h('form', { id: 'preview', onsubmit: (e) => guarded(async () => {
    e.preventDefault()
    const payload = parseJson(e.target.payload.value, 'payload')
    const headers = e.target.headers.value.trim() ? parseJson(e.target.headers.value, 'headers') : {}
    const { data } = await api('POST', `/v1/webhooks/${id}/preview`, { payload, headers, transform: editor.transform.value.trim() === '' ? null : editor.transform.value })
    result.replaceChildren(data.ok ? json(data.events) : message(`${data.error.code}: ${data.error.message}`))
  }) }, h('h2', {}, 'Preview'), h('div', { class: 'row' },
    h('label', {}, 'Incoming payload (JSON)', h('textarea', { name: 'payload' }, '{\n  "type": "invoice.paid",\n  "id": "evt_1"\n}')),
    h('label', {}, 'Headers (JSON)', h('textarea', { name: 'headers' }, '{}'))), h('button', {}, 'Run preview'), result)
  const failed = await api('GET', `/v1/webhooks/${id}/requests?status=failed&limit=50`).then((r) => r.data)
  const replayAll = h('button', { id: 'replay-all', onclick: () => guarded(async () => { await api('POST', `/v1/webhooks/${id}/requests/replay`, { status: 'failed' }); route() }) }, 'Replay all failed')
  show(h('h1', {}, `Webhook ${w.name}`), h('p', {}, 'URL: ', h('code', { id: 'webhook-url' }, w.url), ` · env ${w.env}`), editor, preview,
    h('h2', {}, `Failed requests (${failed.length})`), failed.length ? replayAll : h('p', { class: 'muted' }, 'None.'),
    h('table', { id: 'failed' }, h('tbody', {}, failed.map((r) => h('tr', {}, h('td', {}, time(r.received_at)), h('td', {}, `${r.error?.code ?? ''}: ${r.error?.message ?? ''}`),
      h('td', {}, h('button', { onclick: () => guarded(async () => { await api('POST', `/v1/webhooks/${id}/requests/${r.request_id}/replay`); route() }) }, 'Replay')))))),
    ...(w.env === 'branch' ? await centralPage(id) : []))
}

// A branch-group webhook's central page: requests that named no active branch environment.
// Their events are kept, no function ran; replay once the environment exists.
async function centralPage(id) {
  const unrouted = await api('GET', `/v1/webhooks/${id}/requests?status=unrouted&limit=50`).then((r) => r.data)
  const replayAll = h('button', { id: 'replay-unrouted', onclick: () => guarded(async () => { await api('POST', `/v1/webhooks/${id}/requests/replay`, { status: 'unrouted' }); route() }) }, 'Replay all unrouted')
  return [h('h2', {}, `Unrouted requests (${unrouted.length})`),
    h('p', { class: 'muted' }, 'Sent without x-service-env, or naming no active branch environment: stored here, no function ran.'),
    unrouted.length ? replayAll : h('p', { class: 'muted' }, 'None.'),
    h('table', { id: 'unrouted' }, h('tbody', {}, unrouted.map((r) => h('tr', {}, h('td', {}, time(r.received_at)),
      h('td', {}, Object.entries(r.request.headers).find(([k]) => k.toLowerCase() === 'x-service-env')?.[1] ?? r.request.query['x-service-env']?.[0] ?? '(no environment)'),
      h('td', {}, (r.events ?? []).map((e) => e.name).join(', '))))))]
}

// Keys: created keys are shown once.
async function keysView() {
  const { data } = await api('GET', '/v1/keys')
  const created = h('div', { id: 'created-key' })
  const form = h('form', { id: 'create-key', onsubmit: (e) => guarded(async () => {
    e.preventDefault()
    const { data: k } = await api('POST', '/v1/keys', { env: e.target.env.value })
    await keysView()
    document.getElementById('created-key').replaceChildren(message('Copy this key now; it is not shown again:', 'ok'), h('code', { id: 'new-key' }, k.key))
  }) }, h('label', {}, 'Environment (or "branch" for the branch group) ', h('input', { type: 'text', name: 'env', value: 'production' })), h('button', {}, 'Create key'))
  show(h('h1', {}, 'Event keys'), form, created, h('table', { id: 'keys' }, h('tbody', {}, data.map((k) => h('tr', {},
    h('td', {}, k.prefix + '…'), h('td', {}, k.env), h('td', {}, k.revoked_at ? `revoked ${time(k.revoked_at)}` : h('button', { onclick: () => guarded(async () => { await api('DELETE', `/v1/keys/${k.id}`); route() }) }, 'Revoke')))))))
}

async function envsView() {
  const { data } = await api('GET', '/v1/envs')
  const form = h('form', { id: 'create-env', onsubmit: (e) => guarded(async () => {
    e.preventDefault()
    const rate = e.target.rate.value
    await api('POST', '/v1/envs', { name: e.target.name.value, branch: e.target.branch.checked, ...(rate && { max_events_per_second: Number(rate) }) })
    route()
  }) }, h('label', {}, 'Name ', h('input', { type: 'text', name: 'name', required: true })), h('label', {}, h('input', { type: 'checkbox', name: 'branch' }), ' branch environment'),
  h('label', {}, 'Rate limit (events/s, optional) ', h('input', { type: 'number', name: 'rate', min: '1' })), h('button', {}, 'Create environment'))
  const limits = (e) => [e.max_events_per_second ? `${e.max_events_per_second} events/s` : 'no rate limit', e.max_body_bytes ? `bodies ≤ ${e.max_body_bytes} bytes` : ''].filter(Boolean).join(', ')
  show(h('h1', {}, 'Environments'), form, h('table', { id: 'envs' }, h('tbody', {}, data.map((e) => h('tr', {}, h('td', {}, e.name), h('td', {}, e.kind), h('td', {}, limits(e)),
    h('td', {}, e.archived_at ? 'archived' : e.kind === 'branch' ? h('button', { onclick: () => guarded(async () => { await api('POST', `/v1/envs/${e.name}/archive`); route() }) }, 'Archive') : ''))))))
}

// Send any event to a local Dev Server (CORS is open on its /e/* in dev mode).
function sendView() {
  const result = h('div', { id: 'send-result' })
  show(h('h1', {}, 'Send an event to a Dev Server'), h('form', { id: 'send', onsubmit: (e) => guarded(async () => {
    e.preventDefault()
    const event = parseJson(e.target.event.value, 'event')
    const response = await fetch(`${e.target.server.value.replace(/\/$/, '')}/e/dev`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) })
    const body = await response.json()
    result.replaceChildren(response.ok ? message(`Sent: ${body.ids.join(', ')}`, 'ok') : message(`${body.code}: ${body.error}`))
  }) }, h('label', {}, 'Dev Server ', h('input', { type: 'text', name: 'server', value: 'http://localhost:8288', size: 40 })),
  h('label', {}, 'Event', h('textarea', { name: 'event' }, '{\n  "name": "app/user.signed-up",\n  "data": { "plan": "pro" }\n}')), h('button', {}, 'Send'), result))
}

async function route() {
  const [path, query] = (location.hash.slice(1) || '/events').split('?')
  const params = new URLSearchParams(query)
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', path.startsWith(a.getAttribute('href').slice(1)))
  const webhook = /^\/webhooks\/(.+)$/.exec(path)
  await guarded(async () => {
    if (webhook) return webhookView(decodeURIComponent(webhook[1]))
    const views = { '/events': eventsView, '/webhooks': webhooksView, '/keys': keysView, '/envs': envsView, '/send': sendView }
    await (views[path] ?? eventsView)(params)
  })
}
window.addEventListener('hashchange', route)
route()
