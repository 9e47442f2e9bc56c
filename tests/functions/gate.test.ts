// The gate (runner/gate.ts) on its own, with a FlowView kept in a Map: what a debounce keeps when the
// events of one key come out of the order they were accepted in (in distributed mode they may, through
// different partitions of the incoming topic).
import t from 'tap'
import type { EventRecord } from '../../core/event.ts'
import type { FlowControl } from '../../core/flow.ts'
import { firstRecord } from '../../core/run-record.ts'
import { createGate } from '../../runner/gate.ts'
import type { FlowView } from '../../runner/flow-view.ts'
import { NOW, event, functionSpec } from './plan-fixtures.ts'

const flow: FlowControl = { debounce: { key: 'event.data.k', periodMs: 2000 } }
const fn = functionSpec(flow, 'sdk/debounce')

function mapView(): FlowView {
  const values = new Map<string, string>()
  return {
    async get<T>(key: string) {
      const value = values.get(key)
      return value === undefined ? null : (JSON.parse(value) as T)
    },
    set(key, value) {
      if (value === null) values.delete(key)
      else values.set(key, JSON.stringify(value))
    },
    take: () => [],
  }
}

const accepted = (id: string, atMs: number): EventRecord => ({ ...event('sdk/debounce', { k: 'k' }, atMs), id })

t.test('debounce: the last accepted event wins, whatever order they reach the gate in', async (t) => {
  const { gate } = createGate(fn, flow)
  const view = mapView()
  const [d1, d2, d3] = [accepted('d-1', NOW), accepted('d-2', NOW + 700), accepted('d-3', NOW + 1400)]
  const first = await gate(firstRecord(d1, 'app-fn', NOW), view, NOW + 10)
  t.equal(first.kind, 'park', 'the first waits for a quiet period')
  const third = await gate(firstRecord(d3, 'app-fn', NOW + 1400), view, NOW + 1410)
  t.equal(third.kind, 'park', 'a later one replaces it')
  t.equal(third.kind === 'park' && third.unpark?.event.id, 'd-1')
  const late = await gate(firstRecord(d2, 'app-fn', NOW + 700), view, NOW + 1420)
  t.equal(late.kind, 'gathered', 'one accepted before the waiting one is taken, not run')
  const key = third.kind === 'park' ? third.record.gather!.key : ''
  const waiting = await view.get<{ record: { event: EventRecord } }>(key)
  t.equal(waiting?.record.event.id, 'd-3', 'd-3 still waits')

  const timer = third.kind === 'park' ? third.record : undefined
  const due = await gate(timer!, view, timer!.dueAt!)
  t.equal(due.kind, 'admit', 'and runs when its time comes')
  t.equal(due.kind === 'admit' && due.record.event.id, 'd-3')
})
