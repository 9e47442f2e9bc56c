import type { Bus } from './types.ts'
import type { Codec } from './codec.ts'

/** A named output a stage writes to: it knows its topic, key and codec; the stage knows none of them. */
export interface Output<T> {
  publish(values: T[]): Promise<void>
}

export interface ForwardingOutput<T> extends Output<T> {
  /** Passes records on unchanged: `encoded[i]` is `values[i]` as read with this output's codec (nothing is encoded again). */
  forward(values: T[], encoded: Buffer[]): Promise<void>
}

export function createOutput<T>(
  bus: Bus,
  topic: string,
  codec: Codec<T>,
  keyOf: (value: T) => string,
  /** `handOn`: the producer never changes a value once published, so consumers may share it (BusRecord.decoded). */
  options: { handOn?: boolean } = {},
): ForwardingOutput<T> {
  // An in-process log may hand the values themselves to consumers whose codec can adopt them.
  const handOn = options.handOn && codec.adopt ? (value: T) => value : () => undefined
  return {
    publish(values) {
      if (values.length === 0) return Promise.resolve()
      return bus.publish(
        topic,
        values.map((value) => ({ key: keyOf(value), value: codec.encode(value), decoded: handOn(value) })),
      )
    },
    forward(values, encoded) {
      if (values.length === 0) return Promise.resolve()
      return bus.publish(
        topic,
        values.map((value, i) => ({ key: keyOf(value), value: encoded[i], decoded: handOn(value) })),
      )
    },
  }
}
