// Schema registry basic auth, against a real registry that demands it (a private Apicurio with one
// user): the right credentials register the schemas; a wrong password, or none, stops startup with
// CREDENTIALS_REJECTED naming the settings, and the password appears nowhere in the error.
import t from 'tap'
import pino from 'pino'
import { createAvroCodecs } from '../../bus/avro.ts'
import { topicNames } from '../../bus/topics.ts'
import type { StoredEvent } from '../../core/event.ts'
import { startRegistry } from '../infra/registry.ts'

const USER = 'api-key'
const PASSWORD = 'registry-Secret-9d1'
t.setTimeout(300_000) // a JVM's start on a loaded machine
const registry = await startRegistry({ basicAuth: { username: USER, password: PASSWORD } })
t.teardown(() => registry.stop())
const topics = topicNames('regauth')
const event: StoredEvent = {
  internalId: '01J0000000000000000000000A',
  id: 'a',
  name: 'x/y',
  data: {},
  ts: 1,
  env: 'production',
  receivedAt: 2,
  source: { kind: 'api' },
}
const log = pino({ level: 'silent' })
const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`

async function latestId(): Promise<number> {
  const response = await fetch(`${registry.url}/subjects/${topics.events}-value/versions/latest`, {
    headers: { authorization },
  })
  return ((await response.json()) as { id: number }).id
}

t.test('the right credentials register the schemas', async (t) => {
  const codecs = await createAvroCodecs(
    { schemaRegistryUrl: registry.url, schemaRegistryAuth: { username: USER, password: PASSWORD }, topics },
    log,
  )
  t.equal(codecs.stored.encode(event).readUInt32BE(1), await latestId(), 'registered; records carry its id')
})

t.test('credentials written into the URL are sent as basic auth', async (t) => {
  const url = new URL(registry.url)
  url.username = USER
  url.password = PASSWORD
  const codecs = await createAvroCodecs({ schemaRegistryUrl: url.toString(), topics }, log)
  t.equal(codecs.stored.encode(event).readUInt32BE(1), await latestId())
})

const refusals: Array<[string, { username: string; password: string } | undefined]> = [
  ['a wrong password', { username: USER, password: 'wrong-registry-pass' }],
  ['no credentials', undefined],
]
for (const [what, auth] of refusals) {
  t.test(`${what} is CREDENTIALS_REJECTED naming the settings, without the password`, async (t) => {
    const err = await createAvroCodecs({ schemaRegistryUrl: registry.url, schemaRegistryAuth: auth, topics }, log).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    )
    t.equal(err?.code, 'CREDENTIALS_REJECTED')
    t.match(
      err?.message,
      /SLUICE_SCHEMA_REGISTRY_USER \/ SLUICE_SCHEMA_REGISTRY_PASSWORD\): the schema registry at .* answered 401/,
    )
    t.notMatch(err?.message, /wrong-registry-pass|registry-Secret/)
  })
}
