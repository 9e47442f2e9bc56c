// What flow control did to a run, in words: why it was skipped (a rate limit, idempotency, a singleton
// running, a resume that skipped what a pause held), and the events a batch run ran with. Shared by
// the run page, the runs list and an event's runs.

/** The whole reason, for the run page: `Skipped (RATE_LIMITED): over the rate limit of 3 per 60 s …`. */
export function SkipText({ error }: { error: any }) {
  return (
    <>
      Skipped{error?.code ? ` (${error.code})` : ''}: {error?.message ?? 'flow control started no run'}.
    </>
  )
}

/** A list row's few words: the message, cut to a line (the run page has it whole). */
export function SkipReason({ error }: { error: any }) {
  if (!error?.message) return null
  return (
    <div class="muted small-text skip-reason" title={error.message}>
      {error.message}
    </div>
  )
}

/** A batch run's events (batchEvents), in the order the handler got them. */
export function BatchEvents({ ids }: { ids: string[] }) {
  return (
    <ol id="batch-events" class="batch-events">
      {ids.map((id) => (
        <li key={id}>
          <a class="mono" href={`#/events/${id}`}>
            {id}
          </a>
        </li>
      ))}
    </ol>
  )
}
