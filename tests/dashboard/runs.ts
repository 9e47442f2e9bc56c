// Runs over REST for the dashboard's browser tests, which open a run's page once it reached a state.
import { eventually, getJson } from '../helpers/server.ts'
import { sendEvent } from '../functions/fixtures/rest.ts'

/** The run of `functionId` that the event started, once `ready` holds for it. */
export function runWhen(
  url: string,
  eventId: string,
  functionId: string,
  ready: (run: any) => boolean,
  timeoutMs = 15_000,
): Promise<any> {
  return eventually(
    async () => {
      const { body } = await getJson(`${url}/v1/events/${eventId}/runs`)
      const run = body.data.find((r: any) => r.function_id === functionId)
      return run && ready(run) ? run : undefined
    },
    timeoutMs,
    50,
  )
}

export const isWaiting = (run: any) => run.status === 'waiting'
export const hasEnded = (run: any) => ['completed', 'failed', 'cancelled', 'skipped'].includes(run.status)

/** A run of `waits-orders` waiting for `test/paid` of its order (an hour unless `timeout`). */
export async function waitingOrder(url: string, order: string, timeout?: string): Promise<any> {
  const eventId = await sendEvent(url, { name: 'test/ordered', data: { order, ...(timeout && { timeout }) } })
  return runWhen(url, eventId, 'waits-orders', isWaiting)
}
