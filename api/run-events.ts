// The events a run started with, read back from the store for a retry or a replay: one event, or a
// batch's every event (`eventIds`, in the order the run had them), so that it runs again with the
// same events it first had. A batch event gone from the store (retention, erasure) is left out.
import type { EventRecord } from '../core/event.ts'
import type { RunDoc } from '../core/run-doc.ts'
import type { EventStore } from '../store/types.ts'

export async function runEvents(
  store: EventStore,
  run: RunDoc,
): Promise<{ event: EventRecord; events?: EventRecord[] } | undefined> {
  const ids = run.eventIds && run.eventIds.length > 0 ? run.eventIds : [run.eventId]
  const found: EventRecord[] = []
  for (const stored of await Promise.all(ids.map((id) => store.getEvent(id)))) {
    if (!stored) continue
    const { duplicateOf: _, ...event } = stored
    found.push(event)
  }
  const event = found.find((e) => e.internalId === run.eventId) ?? found[0]
  if (!event) return undefined
  return run.eventIds && run.eventIds.length > 0 ? { event, events: found } : { event }
}
