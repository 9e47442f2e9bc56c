// What a consuming stage reads: a bus to subscribe on, and how a record becomes a value. The
// composition root decides the decoding (the embedded one may hand over the producers' own values,
// bus/local.ts), so a stage's code is the same whichever log it reads.
import type { Bus, ConsumedRecord } from './types.ts'
import type { Codec } from './codec.ts'

export interface Source<T> extends Pick<Bus, 'subscribe'> {
  decode(record: ConsumedRecord): T
}

export function createSource<T>(bus: Pick<Bus, 'subscribe'>, codec: Codec<T>): Source<T> {
  return {
    subscribe: (options) => bus.subscribe(options),
    decode: (record) => codec.decode(record.value),
  }
}

/** A value as a stage consumed it, with the record it came from: what a stage passes on unchanged. */
export interface Consumed<T> {
  value: T
  record: ConsumedRecord
}

/** Encodes a consumed value as the bytes it was read from: passing a record on encodes nothing again. */
export const asRead: Pick<Codec<Consumed<unknown>, Buffer>, 'encode'> = {
  encode: (consumed) => consumed.record.value,
}
