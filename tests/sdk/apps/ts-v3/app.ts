// The SDK test app written with npm `inngest` 3.x (installed as `inngest-v3`), served on node:http
// (tests/sdk/apps/ts/functions.ts). The SDK reads its INNGEST_* variables itself.
import { Inngest, NonRetriableError } from 'inngest-v3'
import { serve } from 'inngest-v3/node'
import { defineFunctions, listen } from '../ts/functions.ts'

const client = new Inngest({ id: 'sdk-ts-v3' })
// biome-ignore lint/suspicious/noExplicitAny: the shared definitions are untyped across majors
const create = client.createFunction as any
const functions = defineFunctions((opts, trigger, handler) => create(opts, trigger, handler), NonRetriableError)
await listen(serve({ client, functions: functions as never }) as never)
