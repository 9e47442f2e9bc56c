// The SDK test app written with npm `inngest` 4.x, served on node:http (tests/sdk/apps/ts/functions.ts).
// The SDK reads its INNGEST_* variables itself; nothing here passes a URL or key.
import { Inngest, NonRetriableError } from 'inngest'
import { serve } from 'inngest/node'
import { defineFunctions, listen } from '../ts/functions.ts'

const client = new Inngest({ id: 'sdk-ts-v4' })
// biome-ignore lint/suspicious/noExplicitAny: the shared definitions are untyped across majors
const create = client.createFunction as any
const functions = defineFunctions(
  (opts, trigger, handler) => create({ ...opts, triggers: [trigger] }, handler),
  NonRetriableError,
)
await listen(serve({ client, functions: functions as never }) as never)
