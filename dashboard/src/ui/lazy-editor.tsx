// CodeMirror is most of the bundle's weight and only the webhook page needs it: it loads as a
// separate chunk the first time an editor is shown, so the Events page starts without it.
import { useEffect, useState } from 'preact/hooks'
import type { Problem } from './code-editor.tsx'

type Props = Parameters<typeof import('./code-editor.tsx').CodeEditor>[0]
type Editor = typeof import('./code-editor.tsx').CodeEditor
export type { Problem }

let loading: Promise<Editor> | undefined

export function CodeEditor(props: Props) {
  const [Editor, setEditor] = useState<Editor | null>(null)
  useEffect(() => {
    let current = true
    loading ??= import('./code-editor.tsx').then((m) => m.CodeEditor)
    loading.then((loaded) => current && setEditor(() => loaded))
    return () => {
      current = false
    }
  }, [])
  return Editor ? (
    <Editor {...props} />
  ) : (
    <div class="code-editor loading" id={props.id} aria-busy="true">
      Loading editor…
    </div>
  )
}
