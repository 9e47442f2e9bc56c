import type { ComponentChildren } from 'preact'

export function ErrorMessage({ error }: { error?: Error | string | null }) {
  if (!error) return null
  return (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  )
}

export function Ok({ children, id }: { children: ComponentChildren; id?: string }) {
  return (
    <p class="ok" role="status" id={id}>
      {children}
    </p>
  )
}

/** What to do next when a list is empty. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>
}

export function Loading() {
  return (
    <p class="muted" aria-busy="true">
      Loading…
    </p>
  )
}

const STATUS_CLASS: Record<string, string> = {
  completed: 'good',
  accepted: 'good',
  failed: 'bad',
  running: 'info',
  waiting: 'info',
  queued: 'muted',
  retrying: 'warn',
  deduplicated: 'muted',
  filtered: 'muted',
  unrouted: 'warn',
  cancelled: 'warn',
  skipped: 'muted',
  paused: 'warn',
  held: 'warn',
  open: 'bad',
  resolved: 'good',
  done: 'good',
}

export function Badge({ status }: { status: string }) {
  return <span class={`badge ${STATUS_CLASS[status] ?? ''}`}>{status}</span>
}

/** Copies text to the clipboard; says so for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const copy = async (e: Event) => {
    const button = e.currentTarget as HTMLButtonElement
    await navigator.clipboard.writeText(text).then(
      () => {
        button.textContent = 'Copied'
      },
      () => {
        button.textContent = 'Copy failed'
      },
    )
    setTimeout(() => {
      button.textContent = label
    }, 1_500)
  }
  return (
    <button type="button" class="small" onClick={copy}>
      {label}
    </button>
  )
}

/**
 * A labelled filter `<select>`: "Any" (empty) and one option per value, starting at `value`. Not
 * controlled (no `value` on the select): Preact sets a controlled field back to its prop at every
 * render, so a choice not yet applied was lost whenever the page re-rendered (a list loading,
 * events streaming in). A form of these takes a `key` of the filters it shows, so that a change of
 * the URL starts it afresh.
 */
export function FilterSelect(props: { label: string; name: string; value: string; options: readonly string[] }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="" selected={props.value === ''}>
          Any
        </option>
        {props.options.map((o) => (
          <option key={o} value={o} selected={o === props.value}>
            {o}
          </option>
        ))}
      </select>
    </label>
  )
}
