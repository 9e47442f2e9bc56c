// A function's flow control in a few words per option, as the Functions page lists it: "1 at a time per
// event.data.customer", "throttle 2 / 2 s", "rate 3 / min per event.data.user", "batches of 3 within 1 s".
import type { ComponentChildren } from 'preact'
import { per, span } from '../ui/format.ts'

/** ` per <key>`: the option holds per value of a CEL expression over the event. */
const PerKey = ({ value }: { value?: string }) =>
  value === undefined ? null : (
    <>
      {' '}
      per <code>{value}</code>
    </>
  )

function Line({ option, children }: { option: string; children: ComponentChildren }) {
  return (
    <div class="flow-line" data-option={option}>
      {children}
    </div>
  )
}

export function FlowSummary({ flow }: { flow: any }) {
  if (!flow) return <span class="muted">none</span>
  const { throttle, rate_limit: rate, debounce, batch_events: batch, singleton } = flow
  return (
    <>
      {(flow.concurrency ?? []).map((c: any, i: number) => (
        <Line key={`c${i}`} option="concurrency">
          {c.limit} at a time
          <PerKey value={c.key} />
          {c.scope === 'env' && <span class="muted"> (shared by the environment)</span>}
        </Line>
      ))}
      {throttle && (
        <Line option="throttle">
          throttle {throttle.limit} / {per(throttle.period_ms)}
          {throttle.burst > 1 && `, bursts of ${throttle.burst}`}
          <PerKey value={throttle.key} />
        </Line>
      )}
      {rate && (
        <Line option="rate_limit">
          rate {rate.limit} / {per(rate.period_ms)}
          <PerKey value={rate.key} />
          <span class="muted"> (more start no run)</span>
        </Line>
      )}
      {debounce && (
        <Line option="debounce">
          debounce {span(debounce.period_ms)}
          <PerKey value={debounce.key} />
          {debounce.timeout_ms !== undefined && <span class="muted"> (at most {span(debounce.timeout_ms)})</span>}
        </Line>
      )}
      {batch && (
        <Line option="batch_events">
          batches of {batch.max_size} within {span(batch.timeout_ms)}
          <PerKey value={batch.key} />
          {batch.if !== undefined && <span class="muted mono"> if {batch.if}</span>}
        </Line>
      )}
      {flow.priority && (
        <Line option="priority">
          priority <code>{flow.priority.run}</code>
        </Line>
      )}
      {flow.idempotency !== undefined && (
        <Line option="idempotency">
          once a day per <code>{flow.idempotency}</code>
        </Line>
      )}
      {singleton && (
        <Line option="singleton">
          one at a time
          <PerKey value={singleton.key} />:{' '}
          {singleton.mode === 'skip' ? 'a new run is skipped' : 'a new run cancels the running one'}
        </Line>
      )}
    </>
  )
}
