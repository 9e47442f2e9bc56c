// The local log's record batch, as stored in one RocksDB value (bus/local.ts): what one flush
// writes to one partition, like a Kafka record batch.
import type { BusRecord, ConsumedRecord } from './types.ts'

/** A record of the local log: `shared` is the value its bytes encode, for consumers in this process. */
export interface LocalRecord extends BusRecord {
  shared?: unknown
}

// A record batch: [u32 count], then per record [u16 key length][key][f64 timestamp][u32 value length][value].
/** Records published together: each one's time is its own, else `atMs` (when they were published). */
export interface BatchPart {
  records: LocalRecord[]
  atMs: number
}

/** One batch of the parts' records, in order. */
export function encodeBatch(parts: BatchPart[]): Buffer {
  let size = 4
  let count = 0
  for (const { records } of parts) {
    count += records.length
    for (const r of records)
      size +=
        14 + Buffer.byteLength(r.key) + (typeof r.value === 'string' ? Buffer.byteLength(r.value) : r.value.length)
  }
  // Not from Node's shared 8 KiB pool: the tail keeps batches for seconds, and a slice would keep its whole slab.
  const out = Buffer.allocUnsafeSlow(size)
  let at = out.writeUInt32BE(count, 0)
  for (const { records, atMs } of parts) {
    for (const r of records) {
      const keyBytes = out.write(r.key, at + 2)
      out.writeUInt16BE(keyBytes, at)
      at = out.writeDoubleBE(r.timestampMs ?? atMs, at + 2 + keyBytes)
      const valueBytes = typeof r.value === 'string' ? out.write(r.value, at + 4) : r.value.copy(out, at + 4)
      at = out.writeUInt32BE(valueBytes, at) + valueBytes
    }
  }
  return out
}

/** The values the producers shared with their records (LocalRecord.shared), in order; none if the first shared none. */
export function sharedOf(parts: BatchPart[]): unknown[] | undefined {
  if (parts[0].records[0].shared === undefined) return undefined
  const shared: unknown[] = []
  for (const { records } of parts) for (const r of records) shared.push(r.shared)
  return shared
}

/** The batch's records, numbered from `first`; `shared[i]`, if given, is record i's shared value. */
export function decodeBatch(buffer: Buffer, first: number, into: ConsumedRecord[], shared?: unknown[]): void {
  const count = buffer.readUInt32BE(0)
  let at = 4
  for (let i = 0; i < count; i++) {
    into.push(new BatchRecord(buffer, at, first + i, shared?.[i]))
    const valueAt = at + 14 + buffer.readUInt16BE(at)
    at = valueAt + buffer.readUInt32BE(valueAt - 4)
  }
}

/** The producer's own value of a record the local log read from its tail, if it shared one. */
export const sharedValueOf = (record: ConsumedRecord): unknown => BatchRecord.sharedOf(record)

/**
 * A record of a batch (at `at`), its key, value, time and offset taken from the batch's bytes only
 * when read: the event stages read only the value, and the router, handed the producer's values,
 * reads none. A consumer makes one per record it reads, so it holds little.
 */
class BatchRecord implements ConsumedRecord {
  readonly #shared: unknown
  readonly #batch: Buffer
  readonly #at: number
  readonly #offset: number
  #value: Buffer | undefined
  constructor(batch: Buffer, at: number, offset: number, shared: unknown) {
    this.#batch = batch
    this.#at = at
    this.#offset = offset
    this.#shared = shared
  }
  static sharedOf(record: ConsumedRecord): unknown {
    return #shared in record ? record.#shared : undefined
  }
  /** Where the key ends: the time follows, then the value's length, then the value. */
  get #keyEnd(): number {
    return this.#at + 2 + this.#batch.readUInt16BE(this.#at)
  }
  get key(): string {
    return this.#batch.toString('utf8', this.#at + 2, this.#keyEnd)
  }
  get timestampMs(): number {
    return this.#batch.readDoubleBE(this.#keyEnd)
  }
  get value(): Buffer {
    if (this.#value === undefined) {
      const valueAt = this.#keyEnd + 12
      this.#value = this.#batch.subarray(valueAt, valueAt + this.#batch.readUInt32BE(valueAt - 4))
    }
    return this.#value
  }
  get offset(): string {
    return String(this.#offset)
  }
}
