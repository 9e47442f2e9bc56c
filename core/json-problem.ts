// JSON.parse's messages quote the input around the problem ("Unexpected token 'b', "{"key": b"…
// is not valid JSON"), and the input is a raw body that may hold secrets: an error that is
// returned or recorded keeps V8's reason and position, never the excerpt.
export function jsonProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const reason = message.replace(/, ".*" is not valid JSON$/s, '').replace(/ at position \d+.*$/s, '')
  const position = /at position (\d+)/.exec(message)?.[1]
  return position === undefined ? reason : `${reason} at position ${position}`
}
