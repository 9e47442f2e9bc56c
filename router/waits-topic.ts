// The `waits` topic and its key registry. Registrations, removals and candidate events travel on
// `waits` keyed by what must match (matchKey), so each meets the others of its key on one partition,
// in the order they were published. Which (env, event name, match path) have waits is kept on the
// compacted `wait-keys` topic: a router reads it to the end before each batch, so an event it routes
// after a wait was registered is never missed (router/ARCHITECTURE.md).
import type { Bus } from '../bus/types.ts'
import { jsonCodec } from '../bus/codec.ts'
import type { EventRecord } from '../core/event.ts'
import { valueAt } from '../core/expression.ts'
import { matchKey, type WaitKey, type WaitRegistration, type WaitsOutput } from './waits-types.ts'

/** What `waits` carries. */
export type WaitMessage =
  | { kind: 'register'; wait: WaitRegistration }
  | { kind: 'remove'; waitId: string }
  /** An event that may match the waits of its key. */
  | { kind: 'event'; event: EventRecord }

export const waitCodec = jsonCodec<WaitMessage>()

const specKey = (k: Pick<WaitKey, 'env' | 'event' | 'match'>) => `${k.env}\0${k.event}\0${k.match}`

export function createWaitsTopic(bus: Bus, topics: { waits: string; waitKeys: string }) {
  /** `env\0event` → the match paths its waits use ('' for none). */
  const paths = new Map<string, string[]>()
  /** The offset after the last key read into `paths`. */
  let readTo = 0n
  /** Key specs this process published (or is publishing), so concurrent registrations write each once. */
  const published = new Map<string, Promise<void>>()

  const publishWaits = (messages: Array<{ key: string; message: WaitMessage }>) =>
    bus.publish(
      topics.waits,
      messages.map(({ key, message }) => ({ key, value: waitCodec.encode(message) })),
    )

  const output: WaitsOutput = {
    async register(waits, options) {
      if (waits.length === 0) return
      const specs = [...new Set(waits.map(specKey))]
      const fresh = specs.filter((k) => !published.has(k))
      if (fresh.length > 0) {
        const publishing = bus.publish(
          topics.waitKeys,
          fresh.map((key) => ({ key, value: '1' })),
        )
        for (const key of fresh) published.set(key, publishing)
        publishing.catch(() => {
          for (const key of fresh) if (published.get(key) === publishing) published.delete(key)
        })
      }
      const registering = () =>
        publishWaits(waits.map((wait) => ({ key: matchKey(wait), message: { kind: 'register', wait } })))
      if (options?.together) {
        await Promise.all([...specs.map((k) => published.get(k)), registering()])
        return
      }
      // The keys first, durable: a router that sees an event after this returns routes it to the matcher.
      await Promise.all(specs.map((k) => published.get(k)))
      await registering()
    },
    async remove(waits) {
      if (waits.length === 0) return
      await publishWaits(waits.map((w) => ({ key: matchKey(w), message: { kind: 'remove', waitId: w.waitId } })))
    },
  }

  return {
    output,
    /**
     * Reads the key registry to its end: every key published before this call is known after it. Keys
     * are only ever added, so each call reads on from where the last one ended: with no new key, the
     * local log answers from memory (the one pass calls this for every group of events).
     */
    async refresh(): Promise<void> {
      const from = readTo
      let to = from
      await bus.readPartition(
        topics.waitKeys,
        0,
        async (records) => {
          for (const { key } of records) {
            const [env, event, match] = key.split('\0')
            const list = paths.get(`${env}\0${event}`) ?? paths.set(`${env}\0${event}`, []).get(`${env}\0${event}`)!
            if (!list.includes(match)) list.push(match)
          }
          to = BigInt(records[records.length - 1].offset) + 1n
        },
        String(from),
      )
      if (to > readTo) readTo = to
    },
    /** Sends each event to the waits it may match: one message per match path its name has waits on. */
    async route(events: EventRecord[]): Promise<void> {
      if (paths.size === 0) return
      const messages: Array<{ key: string; message: WaitMessage }> = []
      for (const event of events) {
        for (const match of paths.get(`${event.env}\0${event.name}`) ?? []) {
          const value = match === '' ? '' : valueAt(event, match.split('.'))
          if (value === undefined) continue // an event without the field matches no wait on it
          const key = matchKey({
            env: event.env,
            event: event.name,
            match,
            value: match === '' ? '' : JSON.stringify(value),
          })
          messages.push({ key, message: { kind: 'event', event } })
        }
      }
      if (messages.length > 0) await publishWaits(messages)
    },
  }
}

export type WaitsTopic = ReturnType<typeof createWaitsTopic>
