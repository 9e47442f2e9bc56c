// One app written with the real npm `inngest` (4.x, or 3.x as `inngest-v3`), served in this process on
// a free loopback port, with the functions the SDK tests drive through Sluice. The two majors differ
// in createFunction's arguments only (v4 takes the triggers in the options).
import type { AddressInfo } from 'node:net'
import { createServer, type Server } from 'node:http'
import * as v4 from 'inngest'
import { serve as serveV4 } from 'inngest/node'
import * as v3 from 'inngest-v3'
import { serve as serveV3 } from 'inngest-v3/node'

export type JsMajor = 'v4' | 'v3'

export interface JsAppOptions {
  major: JsMajor
  appId: string
  /** Sluice's URL: the SDK's API and Event API base. */
  baseUrl: string
  /** Production: Sluice's signing key and an event key; dev mode without them. */
  signingKey?: string
  eventKey?: string
  /** A port chosen beforehand; a free one by default. */
  port?: number
}

export interface JsApp {
  url: string
  send(name: string, data: Record<string, unknown>): Promise<void>
  close(): Promise<void>
}

export async function startJsApp(options: JsAppOptions): Promise<JsApp> {
  const dev = options.signingKey === undefined
  const sdk = (options.major === 'v4' ? v4 : v3) as typeof v4
  const client = new sdk.Inngest({
    id: options.appId,
    isDev: dev,
    baseUrl: options.baseUrl,
    ...(options.signingKey && { signingKey: options.signingKey }),
    ...(options.eventKey && { eventKey: options.eventKey }),
  } as ConstructorParameters<typeof v4.Inngest>[0]) as v4.Inngest
  // biome-ignore lint/suspicious/noExplicitAny: the two majors' createFunction differ in arity
  const define = (opts: Record<string, unknown>, trigger: unknown, handler: (ctx: any) => unknown): any =>
    options.major === 'v4'
      ? (client.createFunction as any)({ ...opts, triggers: trigger }, handler)
      : (client.createFunction as any)(opts, trigger, handler)

  const steps = define({ id: 'steps' }, { event: 'sdk/steps' }, async ({ event, step }) => {
    const a = await step.run('first', () => event.data.a as number)
    const b = await step.run('second', () => (event.data.b as number) + a)
    const [c, d] = await Promise.all([step.run('left', () => 1), step.run('right', () => 2)])
    await step.sleep('nap', '1s')
    return { sum: b + c + d }
  })
  const wait = define({ id: 'wait' }, { event: 'sdk/order' }, async ({ step }) => {
    const approval = await step.waitForEvent('approval', {
      event: 'sdk/approve',
      timeout: '1m',
      if: 'async.data.id == event.data.id',
    })
    return { by: approval?.data.by ?? null }
  })
  const invoke = define({ id: 'invoke' }, { event: 'sdk/invoke' }, async ({ step }) => {
    const result = await step.invoke('call-steps', { function: steps, data: { a: 10, b: 20 } })
    return { invoked: result }
  })
  const retry = define({ id: 'retry', retries: 2 }, { event: 'sdk/retry' }, async ({ step, attempt }) => {
    return await step.run('flaky', () => {
      if (attempt === 0) throw new Error('flaked on the first attempt')
      return { attempt }
    })
  })
  const fail = define(
    {
      id: 'fail',
      retries: 1,
      onFailure: async ({
        event,
        step,
      }: {
        event: { data: { error: { message: string } } }
        step: v4.GetStepTools<v4.Inngest>
      }) => step.run('noted', () => ({ noted: event.data.error.message })),
    },
    { event: 'sdk/fail' },
    async ({ step }) => {
      await step.run('boom', () => {
        throw new sdk.NonRetriableError('the card was declined')
      })
    },
  )
  const cancel = define(
    { id: 'cancel', cancelOn: [{ event: 'sdk/cancel', if: 'async.data.id == event.data.id' }] },
    { event: 'sdk/long' },
    async ({ step }) => {
      await step.sleep('long', '1m')
      return 'not cancelled'
    },
  )
  const flow = define(
    {
      id: 'flow',
      concurrency: [{ limit: 1, key: 'event.data.user' }],
      throttle: { limit: 5, period: '1s', key: 'event.data.user' },
    },
    { event: 'sdk/flow' },
    async ({ event, step }) => step.run('work', () => ({ user: event.data.user })),
  )
  const send = define({ id: 'send' }, { event: 'sdk/send' }, async ({ event, step }) => {
    await step.sendEvent('emit', { name: 'sdk/emitted', data: { from: event.data.n } })
    return 'sent'
  })
  const finished = define(
    { id: 'finished' },
    { event: 'inngest/function.finished', if: `event.data.function_id == '${options.appId}-steps'` },
    async ({ event }) => ({ result: event.data.result }),
  )
  const functions = [steps, wait, invoke, retry, fail, cancel, flow, send, finished]
  // 3.x reads the signing key from serve()'s options (or INNGEST_SIGNING_KEY), not the client's.
  const keys = options.signingKey ? { signingKey: options.signingKey, baseUrl: options.baseUrl } : {}
  const handler = (options.major === 'v4' ? serveV4 : serveV3)({ client, functions, ...keys } as never)
  const server: Server = createServer(handler as never)
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/inngest`
  return {
    url,
    send: async (name, data) => {
      await client.send({ name, data })
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
