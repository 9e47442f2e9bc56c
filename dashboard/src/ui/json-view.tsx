// JSON as a foldable, highlighted tree. Values are rendered as text nodes, never as HTML.
import type { ComponentChildren } from 'preact'
import { CopyButton } from './common.tsx'

const FOLD_CHILDREN_OVER = 30

function Value({ value, depth }: { value: unknown; depth: number }): ComponentChildren {
  if (value === null) return <span class="j-null">null</span>
  if (typeof value === 'string') return <span class="j-str">{JSON.stringify(value)}</span>
  if (typeof value === 'number') return <span class="j-num">{String(value)}</span>
  if (typeof value === 'boolean') return <span class="j-bool">{String(value)}</span>
  const isArray = Array.isArray(value)
  const entries = isArray
    ? (value as unknown[]).map((v, i) => [String(i), v] as const)
    : Object.entries(value as object)
  const [open, close] = isArray ? ['[', ']'] : ['{', '}']
  if (entries.length === 0) return <span class="j-punct">{open + close}</span>
  const summary = `${open} ${entries.length} ${isArray ? 'items' : 'keys'} ${close}`
  return (
    <details class="j-node" open={depth < 3 && entries.length <= FOLD_CHILDREN_OVER}>
      <summary>
        <span class="j-punct">{summary}</span>
      </summary>
      <ul class="j-children">
        {entries.map(([key, child]) => (
          <li key={key}>
            {!isArray && <span class="j-key">{JSON.stringify(key)}</span>}
            {!isArray && <span class="j-punct">: </span>}
            <Value value={child} depth={depth + 1} />
          </li>
        ))}
      </ul>
    </details>
  )
}

export function JsonView({ value, label }: { value: unknown; label: string }) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a <fieldset> is for form controls; this groups a read-only view
    <div class="json-view" role="group" aria-label={label}>
      <div class="json-tools">
        <CopyButton text={JSON.stringify(value, null, 2)} label="Copy JSON" />
      </div>
      <div class="json-tree">
        <Value value={value} depth={0} />
      </div>
    </div>
  )
}
