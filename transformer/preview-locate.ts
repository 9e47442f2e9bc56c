// Where in the user's transform a preview's error happened, as a line and column of their text.
// A compile error names it already (isolated-vm appends `[transform:<key>:<line>:<column>]` to its
// message). A runtime error does not: the sandbox hands back "Name: message" only. So when a
// preview's run threw, the same source runs once more, instrumented: wrapped in a function whose
// errors are caught and marked with the position of the first stack frame in the user's code,
// named by a `//# sourceURL` (V8 names eval'd code by it). The user's text starts on the wrapper's
// first line, so lines are theirs as they are; columns of line 1 move by the wrapper's width. The
// sandbox itself is untouched: deliveries never run this, and the preview's answer stays the
// uninstrumented run's, with only the position added.

export interface SourcePosition {
  line: number
  column: number
}

const SOURCE_URL = 'sluice-transform-preview'
const HEAD = `var transform = __sluiceLocate(function () {`
// One line after the user's text: returns their transform, wrapped so every error it throws (or
// rejects with) carries its position in its name, where the harness's "Name: message" keeps it.
const TAIL = `
;return typeof transform === "function" ? transform : undefined });
function __sluiceLocate(load) {
  function mark(e) {
    try {
      if (e instanceof Error && typeof e.stack === "string") {
        var at = /${SOURCE_URL}:(\\d+):(\\d+)/.exec(e.stack)
        if (at) e.name = "@" + at[1] + ":" + at[2] + "|" + e.name
      }
    } catch (ignored) {}
    return e
  }
  var t
  try { t = load() } catch (e) { throw mark(e) }
  if (typeof t !== "function") return t
  return function () {
    try {
      var r = t.apply(this, arguments)
      if (r !== null && typeof r === "object" && typeof r.then === "function") return r.then(undefined, function (e) { throw mark(e) })
      return r
    } catch (e) { throw mark(e) }
  }
}
//# sourceURL=${SOURCE_URL}`

/** The transform, instrumented to report where it throws. */
export function locatingSource(source: string): string {
  return HEAD + source + TAIL
}

const MARK = /^@(\d+):(\d+)\|/

/**
 * The position an instrumented run's error message carries, and the message without it; the
 * position is kept only if the rest matches the plain run's message (the same failure).
 */
export function positionOf(plainMessage: string, locatedMessage: string): SourcePosition | undefined {
  const at = MARK.exec(locatedMessage)
  if (!at || locatedMessage.slice(at[0].length) !== plainMessage) return undefined
  const line = Number(at[1])
  const column = Number(at[2]) - (line === 1 ? HEAD.length : 0)
  return { line, column: Math.max(1, column) }
}

/** `[transform:<key>:<line>:<column>]` at the end of a compile error. */
export function compilePosition(message: string): SourcePosition | undefined {
  const at = /\[transform:[^\]]*:(\d+):(\d+)\]$/.exec(message)
  return at ? { line: Number(at[1]), column: Number(at[2]) } : undefined
}
