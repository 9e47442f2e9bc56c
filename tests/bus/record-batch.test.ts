// The local log's record batch (bus/record-batch.ts): what one flush writes to one partition.
import t from 'tap'
import { decodeBatch, encodeBatch, sharedValueOf } from '../../bus/record-batch.ts'
import type { ConsumedRecord } from '../../bus/types.ts'

t.test('records come back as they went in, with their offsets and the values shared with them', async (t) => {
  const records = [
    { key: 'k-1', value: '{"name":"a"}', timestampMs: 1_700_000_000_001 },
    { key: 'ключ', value: Buffer.from('{"name":"é"}'), timestampMs: 1_700_000_000_002 },
    { key: '', value: '', timestampMs: 0 },
  ]
  const decoded: ConsumedRecord[] = []
  decodeBatch(
    encodeBatch([
      { records: records.slice(0, 1), atMs: 5 },
      { records: [...records.slice(1, 2), { ...records[2], timestampMs: undefined }], atMs: 0 },
    ]),
    41,
    decoded,
    [{ name: 'a' }, { name: 'é' }, undefined],
  )
  t.same(
    decoded.map((record) => ({
      key: record.key,
      value: record.value.toString(),
      timestampMs: record.timestampMs,
      offset: record.offset,
      shared: sharedValueOf(record),
    })),
    [
      { key: 'k-1', value: '{"name":"a"}', timestampMs: 1_700_000_000_001, offset: '41', shared: { name: 'a' } },
      { key: 'ключ', value: '{"name":"é"}', timestampMs: 1_700_000_000_002, offset: '42', shared: { name: 'é' } },
      { key: '', value: '', timestampMs: 0, offset: '43', shared: undefined },
    ],
  )
})

t.test("a batch owns its memory, not a slice of Node's shared Buffer pool", async (t) => {
  // The log's tail holds batches for seconds: a pool slice would keep its whole 8 KiB slab alive.
  Buffer.from('something else from the pool first')
  const batch = encodeBatch([{ records: [{ key: 'k', value: '{"name":"small"}' }], atMs: 1 }])
  t.ok(batch.length < Buffer.poolSize / 2, 'small enough that allocUnsafe would take it from the pool')
  t.equal(batch.byteOffset, 0)
  t.equal(batch.buffer.byteLength, batch.length)
})
