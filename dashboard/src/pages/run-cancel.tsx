// "Cancel run" and the confirmation it asks for first: a cancel cannot be undone (a retry can be
// asked again), so one click must not end a run. Inline rather than window.confirm, so the question
// can say what happens to the step in flight and is styled and read like the rest of the page.
import { useQuestion } from '../ui/use-question.ts'

export function CancelRun({ onConfirm }: { onConfirm(): void }) {
  const { asking, setAsking, answer: confirm, open } = useQuestion()
  if (!asking)
    return (
      <button type="button" id="cancel-run" class="secondary" ref={open} onClick={() => setAsking(true)}>
        Cancel run…
      </button>
    )
  return (
    <fieldset id="confirm-cancel" class="confirm">
      <legend>Cancel this run?</legend>
      <p>A step already running finishes first; nothing after it runs. A cancelled run cannot be resumed.</p>
      <button
        type="button"
        id="confirm-cancel-run"
        class="danger"
        ref={confirm}
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        Yes, cancel the run
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        No, keep it
      </button>
    </fieldset>
  )
}
