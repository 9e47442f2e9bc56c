// CodeMirror 6: JavaScript or JSON with highlighting, syntax errors marked at once (from the
// parser's error nodes) and, for JavaScript, the errors the server reported (compile errors
// with their line) set through `problem`.
import { useEffect, useRef } from 'preact/hooks'
import { basicSetup } from 'codemirror'
import { EditorView } from '@codemirror/view'
import { EditorState } from '@codemirror/state'
import { javascript } from '@codemirror/lang-javascript'
import { json } from '@codemirror/lang-json'
import { HighlightStyle, syntaxHighlighting, syntaxTree } from '@codemirror/language'
import { tags } from '@lezer/highlight'
import { linter, lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint'

// Colours from CSS variables (style.css), so highlighting keeps its contrast in dark mode too.
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.operatorKeyword, tags.modifier], color: 'var(--cm-keyword)' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: 'var(--j-str)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--j-num)' },
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: 'var(--j-key)' },
  { tag: [tags.function(tags.variableName), tags.definition(tags.variableName)], color: 'var(--cm-def)' },
  { tag: tags.comment, color: 'var(--muted)', fontStyle: 'italic' },
  { tag: tags.invalid, color: 'var(--bad)' },
])

/** An error the server found, at a line and column when it knows them (1-based). */
export interface Problem {
  message: string
  line?: number
  column?: number
}

function syntaxDiagnostics(view: EditorView): Diagnostic[] {
  const found: Diagnostic[] = []
  syntaxTree(view.state).iterate({
    enter: (node) => {
      if (!node.type.isError || found.length >= 5) return
      const from = Math.min(node.from, view.state.doc.length)
      found.push({
        from,
        to: Math.max(from, Math.min(node.to, view.state.doc.length)),
        severity: 'error',
        message: 'Syntax error',
      })
    },
  })
  return found
}

function problemDiagnostic(view: EditorView, problem: Problem | null): Diagnostic[] {
  if (!problem) return []
  const doc = view.state.doc
  const line = doc.line(Math.min(Math.max(problem.line ?? 1, 1), doc.lines))
  const from = Math.min(line.from + Math.max((problem.column ?? 1) - 1, 0), line.to)
  return [{ from, to: problem.line ? line.to : from, severity: 'error', message: problem.message }]
}

export function CodeEditor(props: {
  id: string
  label: string
  value: string
  language: 'javascript' | 'json'
  onChange(value: string): void
  problem?: Problem | null
  minLines?: number
}) {
  const box = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const problem = useRef<Problem | null>(null)
  const onChange = useRef(props.onChange)
  onChange.current = props.onChange
  useEffect(() => {
    view.current = new EditorView({
      parent: box.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          basicSetup,
          syntaxHighlighting(highlight),
          // Wrapped lines and a growing editor: no scroll region inside the page (phones, keyboard users).
          EditorView.lineWrapping,
          props.language === 'javascript' ? javascript() : json(),
          linter((v) => [...syntaxDiagnostics(v), ...problemDiagnostic(v, problem.current)], { delay: 150 }),
          lintGutter(),
          EditorView.contentAttributes.of({ 'aria-label': props.label, id: `${props.id}-input` }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChange.current(update.state.doc.toString())
          }),
          EditorView.theme({ '&': { minHeight: `${(props.minLines ?? 6) * 1.45}em` } }),
        ],
      }),
    })
    return () => view.current?.destroy()
  }, [])
  useEffect(() => {
    problem.current = props.problem ?? null
    // The linter runs on edits; a problem the server reports later is shown at once.
    const v = view.current
    if (v) v.dispatch(setDiagnostics(v.state, [...syntaxDiagnostics(v), ...problemDiagnostic(v, problem.current)]))
  }, [props.problem])
  return <div class="code-editor" id={props.id} ref={box} />
}
