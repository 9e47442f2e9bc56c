// An inline question a button opens (confirming a cancel, choosing how to resume): focus follows it,
// onto its answer when it opens and back to the button when it closes.
import { useEffect, useRef, useState } from 'preact/hooks'

export function useQuestion() {
  const [asking, setAsking] = useState(false)
  const answer = useRef<HTMLButtonElement>(null)
  const open = useRef<HTMLButtonElement>(null)
  const first = useRef(true)
  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    const target = asking ? answer : open
    target.current?.focus()
  }, [asking])
  return { asking, setAsking, answer, open }
}
