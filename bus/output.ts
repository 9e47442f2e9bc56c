import type { Bus } from './types.ts'
import type { Codec } from './codec.ts'

/** A named output a stage writes to: it knows its topic, key and codec; the stage knows none of them. */
export interface Output<T> {
  publish(values: T[]): Promise<void>
}

export function createOutput<T>(
  bus: Pick<Bus, 'publish'>,
  topic: string,
  codec: Pick<Codec<T>, 'encode'>,
  keyOf: (value: T) => string,
): Output<T> {
  return {
    publish(values) {
      if (values.length === 0) return Promise.resolve()
      return bus.publish(
        topic,
        values.map((value) => ({ key: keyOf(value), value: codec.encode(value) })),
      )
    },
  }
}
