// A run's pauses and cancellation in words: what a step waited for (a sleep, an event, an invoked
// function) and how it ended, and what cancelled a run. Shared by the run page and the runs list.
import { fromNow, time } from '../ui/format.ts'

/** `ongoing`: the run waits there now; `cancelled`: the run ended while it waited; `ended`: it resumed. */
export type PauseState = 'ongoing' | 'cancelled' | 'ended'

/** A step's status is `waiting` (or `cancelled`, as the run page shows a waiting step of an ended run). */
export function pauseState(step: { status: string }, runStatus: string): PauseState {
  if (step.status === 'cancelled') return 'cancelled'
  if (step.status !== 'waiting') return 'ended'
  return runStatus === 'waiting' ? 'ongoing' : 'cancelled'
}

/** The awaited event and its condition: `test/paid where data.order matches, if …`. */
function Awaited({ pause }: { pause: any }) {
  return (
    <>
      <code>{pause.event}</code>
      {pause.match !== undefined && (
        <>
          {' '}
          where <code>{pause.match}</code> matches
        </>
      )}
      {pause.if !== undefined && (
        <>
          {' '}
          if <code>{pause.if}</code>
        </>
      )}
    </>
  )
}

const Until = ({ pause }: { pause: any }) => (
  <>
    until {time(pause.until)} ({fromNow(pause.until)})
  </>
)

function InvokedRun({ pause }: { pause: any }) {
  return (
    <>
      Invoked <code>{pause.function}</code>
      {pause.run_id && (
        <>
          {' '}
          — <a href={`#/runs/${pause.run_id}`}>run {pause.run_id}</a>
        </>
      )}
    </>
  )
}

/** One sentence: what the pause waits or waited for, and how it ended. */
export function PauseText({ pause, state }: { pause: any; state: PauseState }) {
  const timedOut = pause.timed_out ? <> — timed out at {time(pause.until)}</> : null
  const whenCancelled = ' when the run was cancelled'
  if (pause.kind === 'sleep') {
    if (state === 'ongoing')
      return (
        <>
          Sleeping <Until pause={pause} />.
        </>
      )
    return (
      <>
        {state === 'cancelled' ? 'Was sleeping' : 'Slept'} until {time(pause.until)}
        {state === 'cancelled' && whenCancelled}.
      </>
    )
  }
  if (pause.kind === 'event') {
    if (state === 'ongoing')
      return (
        <>
          Waiting for <Awaited pause={pause} />, <Until pause={pause} />.
        </>
      )
    if (state === 'cancelled')
      return (
        <>
          Was waiting for <Awaited pause={pause} /> (until {time(pause.until)}){whenCancelled}.
        </>
      )
    return (
      <>
        Waited for <Awaited pause={pause} />
        {pause.matched_event_id ? (
          <>
            , until {time(pause.until)} — matched by{' '}
            <a class="mono" href={`#/events/${pause.matched_event_id}`}>
              {pause.matched_event_id}
            </a>
          </>
        ) : (
          timedOut
        )}
        .
      </>
    )
  }
  if (state === 'ongoing')
    return (
      <>
        <InvokedRun pause={pause} />; waiting for its result <Until pause={pause} />.
      </>
    )
  return (
    <>
      <InvokedRun pause={pause} />
      {state === 'cancelled' ? `; it was waiting for its result${whenCancelled}` : timedOut}.
    </>
  )
}

/** What cancelled a run, no full stop: an event or the singleton run that replaced it (linked), or the API. */
export function CancelCause({ by }: { by: any }) {
  if (by?.kind === 'event')
    return (
      <>
        Cancelled by event <a href={`#/events/${by.event_id}`}>{by.event_name}</a>{' '}
        <span class="muted mono">{by.event_id}</span>
      </>
    )
  if (by?.kind === 'api') return <>Cancelled from the API or the dashboard</>
  if (by?.kind === 'singleton')
    return (
      <>
        Cancelled by <a href={`#/runs/${by.run_id}`}>run {by.run_id}</a>, a newer run of the same singleton key
      </>
    )
  return <>Cancelled</>
}

/** A few words for a list row: what a waiting run waits for. */
export function PauseSummary({ pause }: { pause: any }) {
  if (pause.kind === 'sleep') return <>sleeping, wakes {fromNow(pause.until)}</>
  if (pause.kind === 'event')
    return (
      <>
        for <code>{pause.event}</code>
      </>
    )
  return (
    <>
      for <code>{pause.function}</code>
    </>
  )
}
