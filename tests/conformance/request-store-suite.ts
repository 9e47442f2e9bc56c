// The WebhookRequestStore contract, run against every adapter (RocksDB now; ClickHouse to follow).
import type { Test } from 'tap'
import { newUlid } from '../../core/ids.ts'
import type { RawWebhookRequest } from '../../core/raw-request.ts'
import type { RequestStatus, WebhookRequestRecord, WebhookRequestStore } from '../../store/requests-types.ts'

export interface RequestStoreFixture {
  store: WebhookRequestStore
  close(): Promise<void>
}

function raw(webhookId: string, overrides: Partial<RawWebhookRequest> = {}): RawWebhookRequest {
  return {
    requestId: newUlid(),
    webhookId,
    attempt: 1,
    receivedAt: Date.now(),
    ip: '192.0.2.1',
    headers: { 'Content-Type': 'application/json', 'X-Github-Event': 'push' },
    query: { tag: ['a', 'b'] },
    body: '{"ref":"main"}',
    bodyEncoding: 'utf8',
    ...overrides,
  }
}

function outcome(
  request: RawWebhookRequest,
  status: RequestStatus,
  overrides: Partial<WebhookRequestRecord> = {},
): WebhookRequestRecord {
  return {
    request,
    status,
    processedAt: Date.now(),
    env: status === 'delivered' ? 'production' : null,
    eventIds: status === 'delivered' ? [newUlid()] : [],
    events: status === 'unrouted' ? [{ name: 'github/push', data: { ref: 'main' } }] : [],
    error: status === 'failed' ? { code: 'TRANSFORM_THREW', message: 'TypeError: x is undefined' } : null,
    ...overrides,
  }
}

const webhook = () => 'wh_' + newUlid()

export function requestStoreSuite(t: Test, name: string, open: () => Promise<RequestStoreFixture>): void {
  t.test(`${name}: a recorded outcome reads back equal, raw request included`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const record = outcome(raw(webhook()), 'failed')
    await f.store.record([record])
    t.same(await f.store.get(record.request.webhookId, record.request.requestId), record)
    t.equal(await f.store.get(record.request.webhookId, newUlid()), null)
    t.equal(await f.store.get(webhook(), record.request.requestId), null, 'scoped to its webhook')
  })

  t.test(`${name}: list by webhook and status, newest first, with a cursor`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const id = webhook()
    const statuses: RequestStatus[] = ['failed', 'delivered', 'failed', 'unrouted', 'failed']
    const records = statuses.map((s) => outcome(raw(id), s))
    await f.store.record(records)
    await f.store.record([outcome(raw(webhook()), 'failed')])
    const all = await f.store.list({ webhookId: id, limit: 10 })
    t.same(
      all.requests.map((r) => r.request.requestId),
      records.map((r) => r.request.requestId).reverse(),
    )
    t.equal(all.nextCursor, null)
    const failedIds = records
      .filter((r) => r.status === 'failed')
      .map((r) => r.request.requestId)
      .reverse()
    const page1 = await f.store.list({ webhookId: id, status: 'failed', limit: 2 })
    t.same(
      page1.requests.map((r) => r.request.requestId),
      failedIds.slice(0, 2),
    )
    t.equal(page1.nextCursor, failedIds[1])
    const page2 = await f.store.list({ webhookId: id, status: 'failed', limit: 2, cursor: page1.nextCursor! })
    t.same(
      page2.requests.map((r) => r.request.requestId),
      failedIds.slice(2),
    )
    t.equal(page2.nextCursor, null)
  })

  t.test(
    `${name}: a newer attempt replaces the outcome and moves it between statuses; an older one never does`,
    async (t) => {
      const f = await open()
      t.teardown(() => f.close())
      const request = raw(webhook())
      await f.store.record([outcome(request, 'failed')])
      const second = outcome({ ...request, attempt: 2 }, 'delivered')
      await f.store.record([second])
      t.same(await f.store.get(request.webhookId, request.requestId), second)
      t.same(
        (await f.store.list({ webhookId: request.webhookId, status: 'failed', limit: 10 })).requests,
        [],
        'off the failed list',
      )
      t.equal((await f.store.list({ webhookId: request.webhookId, status: 'delivered', limit: 10 })).requests.length, 1)
      await f.store.record([outcome(request, 'failed')]) // attempt 1 redelivered late
      t.equal((await f.store.get(request.webhookId, request.requestId))!.status, 'delivered')
      const third = outcome({ ...request, attempt: 3 }, 'unrouted')
      await f.store.record([outcome({ ...request, attempt: 4 }, 'failed'), third])
      t.equal(
        (await f.store.get(request.webhookId, request.requestId))!.request.attempt,
        4,
        'within one batch the newest attempt wins',
      )
    },
  )

  t.test(`${name}: recording the same outcome twice keeps one entry`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const record = outcome(raw(webhook()), 'failed')
    await f.store.record([record])
    await f.store.record([record])
    t.equal(
      (await f.store.list({ webhookId: record.request.webhookId, status: 'failed', limit: 10 })).requests.length,
      1,
    )
  })

  t.test(`${name}: removing a webhook forgets its requests and only its`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const gone = outcome(raw(webhook()), 'failed')
    const kept = outcome(raw(webhook()), 'failed')
    await f.store.record([gone, kept])
    await f.store.removeWebhook(gone.request.webhookId)
    t.equal(await f.store.get(gone.request.webhookId, gone.request.requestId), null)
    t.same((await f.store.list({ webhookId: gone.request.webhookId, status: 'failed', limit: 10 })).requests, [])
    t.same(await f.store.get(kept.request.webhookId, kept.request.requestId), kept)
  })

  t.test(
    `${name}: held requests list oldest first with a cursor, are counted, and leave the count once released`,
    async (t) => {
      const f = await open()
      t.teardown(() => f.close())
      const id = webhook()
      const held = [0, 1, 2, 3].map(() => outcome(raw(id), 'held'))
      await f.store.record([...held, outcome(raw(id), 'failed')])
      t.equal(await f.store.count(id, 'held'), 4)
      t.equal(await f.store.count(webhook(), 'held'), 0, 'scoped to its webhook')
      const ids = held.map((r) => r.request.requestId)
      const page1 = await f.store.list({ webhookId: id, status: 'held', limit: 3, oldestFirst: true })
      t.same(
        page1.requests.map((r) => r.request.requestId),
        ids.slice(0, 3),
      )
      t.equal(page1.nextCursor, ids[2])
      const page2 = await f.store.list({ webhookId: id, status: 'held', limit: 3, cursor: ids[2], oldestFirst: true })
      t.same(
        page2.requests.map((r) => r.request.requestId),
        ids.slice(3),
      )
      t.equal(page2.nextCursor, null)
      // Released: the same attempt, now delivered, replaces the held record.
      await f.store.record([outcome(held[0].request, 'delivered')])
      t.equal(await f.store.count(id, 'held'), 3)
      t.equal((await f.store.get(id, ids[0]))!.status, 'delivered')
    },
  )
}
