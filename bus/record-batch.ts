// The local log's record batch, as stored in one RocksDB value (bus/local.ts): what one flush
// writes to one partition, like a Kafka record batch.
import type { BusRecord, ConsumedRecord } from './types.ts'

// A record batch: [u32 count], then per record [u16 key length][key][f64 timestamp][u32 value length][value].
export function encodeBatch(records: BusRecord[]): Buffer {
  let size = 4
  for (const r of records)
    size += 14 + Buffer.byteLength(r.key) + (typeof r.value === 'string' ? Buffer.byteLength(r.value) : r.value.length)
  // Not from Node's shared 8 KiB pool: the log's tail keeps batches for seconds, and a small one cut
  // from the pool would keep its whole slab alive (single events, 64 connections: Buffers 42 →
  // 17–33 MiB).
  const out = Buffer.allocUnsafeSlow(size)
  let at = out.writeUInt32BE(records.length, 0)
  for (const r of records) {
    const keyBytes = out.write(r.key, at + 2)
    out.writeUInt16BE(keyBytes, at)
    at = out.writeDoubleBE(r.timestampMs!, at + 2 + keyBytes)
    const valueBytes = typeof r.value === 'string' ? out.write(r.value, at + 4) : r.value.copy(out, at + 4)
    at = out.writeUInt32BE(valueBytes, at) + valueBytes
  }
  return out
}

export function decodeBatch(buffer: Buffer, first: number, into: ConsumedRecord[], decoded?: unknown[]): void {
  const count = buffer.readUInt32BE(0)
  let at = 4
  for (let i = 0; i < count; i++) {
    const keyBytes = buffer.readUInt16BE(at)
    const key = buffer.toString('utf8', at + 2, at + 2 + keyBytes)
    at += 2 + keyBytes
    const timestampMs = buffer.readDoubleBE(at)
    const valueBytes = buffer.readUInt32BE(at + 8)
    at += 12
    const value = buffer.subarray(at, at + valueBytes)
    into.push({ key, timestampMs, value, offset: String(first + i), decoded: decoded?.[i] })
    at += valueBytes
  }
}
