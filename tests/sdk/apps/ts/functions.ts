// The SDK test apps' function set, written once for npm `inngest` 4.x and 3.x (ts-v4/app.ts, ts-v3/app.ts):
// the same ids, triggers and outputs as the Python and Go apps. Every output is derived from the event, so
// the tests assert it through Sluice's runs API. The majors differ in createFunction's arity only.

// biome-ignore lint/suspicious/noExplicitAny: one handler shape for two majors' step tools
type Ctx = any
// biome-ignore lint/suspicious/noExplicitAny: each major's InngestFunction
export type Define = (
  opts: Record<string, unknown>,
  trigger: Record<string, unknown>,
  handler: (ctx: Ctx) => unknown,
) => any

export function defineFunctions(define: Define, NonRetriableError: new (message: string) => Error): unknown[] {
  const on = (event: string) => ({ event })
  const steps = define({ id: 'steps' }, on('sdk/steps'), async ({ event, step }: Ctx) => {
    const a = await step.run('a', () => event.data.a as number)
    const b = await step.run('b', () => event.data.b as number)
    return { sum: a + b }
  })
  const parallel = define({ id: 'parallel' }, on('sdk/parallel'), async ({ event, step }: Ctx) => {
    const [a, b] = await Promise.all([
      step.run('double', () => (event.data.a as number) * 2),
      step.run('triple', () => (event.data.b as number) * 3),
    ])
    return { sum: a + b }
  })
  const sleep = define({ id: 'sleep' }, on('sdk/sleep'), async ({ event, step }: Ctx) => {
    await step.sleep('nap', '2s')
    return { woke: await step.run('after', () => event.data.id) }
  })
  const wait = define({ id: 'wait' }, on('sdk/wait'), async ({ step }: Ctx) => {
    const approval = await step.waitForEvent('approval', {
      event: 'sdk/approve',
      timeout: '1m',
      if: 'event.data.id == async.data.id',
    })
    return { approved: approval ? approval.data.id : null }
  })
  const invoke = define({ id: 'invoke' }, on('sdk/invoke'), async ({ event, step }: Ctx) => {
    const result = await step.invoke('call-steps', { function: steps, data: { a: event.data.a, b: event.data.b } })
    return { invoked: result }
  })
  const fail = define({ id: 'fail', retries: 1 }, on('sdk/fail'), async ({ event, step }: Ctx) => {
    await step.run('boom', () => {
      throw new NonRetriableError(`no retry for ${event.data.id}`)
    })
  })
  const retry = define({ id: 'retry', retries: 2 }, on('sdk/retry'), async ({ step, attempt }: Ctx) => ({
    flaky: await step.run('flaky', () => {
      if (attempt === 0) throw new Error('attempt 0 fails')
      return `ok on attempt ${attempt}`
    }),
  }))
  const work = async ({ event, step }: Ctx) => ({ id: await step.run('work', () => event.data.id) })
  const key = 'event.data.key'
  const flow = [
    define({ id: 'concurrency', concurrency: [{ limit: 1, key }] }, on('sdk/concurrency'), work),
    define({ id: 'throttle', throttle: { limit: 1, period: '5s', key } }, on('sdk/throttle'), work),
    define({ id: 'rate-limit', rateLimit: { limit: 1, period: '10s', key } }, on('sdk/rate-limit'), work),
    define({ id: 'debounce', debounce: { period: '2s', key } }, on('sdk/debounce'), work),
    define({ id: 'idempotency', idempotency: key }, on('sdk/idempotency'), work),
  ]
  const batch = define(
    { id: 'batch', batchEvents: { maxSize: 3, timeout: '2s' } },
    on('sdk/batch'),
    async ({ events }: Ctx) => ({ count: events.length, ids: events.map((e: Ctx) => e.data.id) }),
  )
  const cancel = define(
    { id: 'cancel', cancelOn: [{ event: 'sdk/cancel', if: 'event.data.id == async.data.id' }] },
    on('sdk/cancellable'),
    async ({ event, step }: Ctx) => {
      await step.sleep('long', '1m')
      return { id: event.data.id }
    },
  )
  const cron = define({ id: 'cron' }, { cron: 'TZ=Europe/Paris 0 3 * * *' }, async () => 'tick')
  const onFailure = define(
    {
      id: 'on-failure',
      retries: 0,
      onFailure: async ({ event }: Ctx) => ({ failed: event.data.event.data.id }),
    },
    on('sdk/on-failure'),
    async ({ event, step }: Ctx) => {
      await step.run('boom', () => {
        throw new Error(`failed for ${event.data.id}`)
      })
    },
  )
  const send = define({ id: 'send' }, on('sdk/send'), async ({ event, step }: Ctx) => {
    await step.sendEvent('emit', { name: 'sdk/sent', data: { id: event.data.id } })
    return { sent: event.data.id }
  })
  return [steps, parallel, sleep, wait, invoke, fail, retry, ...flow, batch, cancel, cron, onFailure, send]
}

/** Serves `handler` (the SDK's node:http handler) at /api/inngest on 127.0.0.1:$PORT. */
export async function listen(handler: (req: unknown, res: unknown) => unknown): Promise<void> {
  const { createServer } = await import('node:http')
  const port = Number(process.argv[2] ?? process.env.PORT)
  const server = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === '/api/inngest') return void handler(req, res)
    res.writeHead(404).end()
  })
  server.listen(port, '127.0.0.1', () => process.stdout.write(`listening on 127.0.0.1:${port}\n`))
}
