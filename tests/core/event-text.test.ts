// An event's stored text (core/event.ts, eventText) is written from parts, with what a request's
// events share turned to JSON once: it must be exactly JSON.stringify's text, for every kind of
// record, whatever its strings hold, and whatever the events before it shared.
import t from 'tap'
import { eventText, toEventRecords, type EventSource, type StoredEvent } from '../../core/event.ts'
import { newUlids, seededUlids } from '../../core/ids.ts'

const awkward = [
  'plain',
  'quote " and \\ backslash',
  'line\nbreak\ttab\u0001',
  'ünïcödé ✓ 🎉',
  '</script>',
  '\u2028\u2029',
]
const sources: EventSource[] = [
  { kind: 'api' },
  { kind: 'api', keyId: 'key_01"x' },
  { kind: 'webhook', webhookId: 'wh_1', requestId: 'r\\1' },
  { kind: 'function', functionId: 'app-f', runId: '01J', stepId: 'step "a"' },
  { kind: 'replay', eventId: '01JAAAAAAAAAAAAAAAAAAAAAAA' },
  { kind: 'invoke', functionId: 'app-f', runId: '01J', stepId: 's', seq: 3, target: 'app-g', routeKey: 'k"1' },
  { kind: 'cron', functionId: 'app-f', cron: '*/5 * * * *' },
]

function records(): StoredEvent[] {
  const out: StoredEvent[] = []
  let n = 0
  for (const name of awkward)
    for (const env of ['production', awkward[(n + 1) % awkward.length]])
      for (const source of sources) {
        const receivedAt = 1_764_250_000_000 + n
        const inputs = [
          {
            name,
            data: { s: awkward[n % awkward.length], n, nested: { list: [1, 'two', null, true, { deep: name }] } },
          },
          { name, data: {}, id: awkward[(n + 2) % awkward.length], ts: 42 },
        ]
        const internalIds = n % 2 === 0 ? newUlids(2, receivedAt) : seededUlids(`${receivedAt},AAAAAAAAAAAAAA==`, 2)
        out.push(...toEventRecords(inputs, { internalIds, env, receivedAt, source }))
        n++
      }
  const [first, second, third] = out
  out.push({ ...first, schemaViolations: ['data/amount: must be integer', 'data: "quoted"'] })
  out.push({ ...second, duplicateOf: third.internalId })
  out.push({ ...third, schemaViolations: [], duplicateOf: first.internalId })
  // Sources equal in content but not the same object, and one source object changing between events.
  out.push({ ...first, source: { ...first.source } }, { ...first, source: { kind: 'api', keyId: 'other' } })
  return out
}

t.test("each record's text is JSON.stringify's, in order and shuffled", async (t) => {
  const all = records()
  const shuffled = all.map((e, i) => all[(i * 7919) % all.length])
  for (const [label, events] of [
    ['in order', all],
    ['shuffled', shuffled],
  ] as const) {
    const different = events.filter((e) => eventText(e) !== JSON.stringify(e))
    t.same(different, [], `${label}: ${events.length} records, every text the same`)
  }
  t.same(JSON.parse(eventText(all[0])), all[0], 'and it parses back to the record')
})

t.test('a record whose times are not safe integers takes JSON.stringify itself', async (t) => {
  const [event] = records()
  for (const odd of [{ ts: Number.NaN }, { receivedAt: Number.POSITIVE_INFINITY }, { ts: 1.5 }]) {
    const record = { ...event, ...odd }
    t.equal(eventText(record), JSON.stringify(record))
  }
})
