// Schema registry basic auth: the right credentials register the schemas; wrong ones stop startup
// with CREDENTIALS_REJECTED naming the settings, and the password appears nowhere in the error.
import t from 'tap'
import pino from 'pino'
import { createAvroCodecs } from '../../bus/avro.ts'
import { topicNames } from '../../bus/topics.ts'
import { startFakeSchemaRegistry } from '../helpers/fake-schema-registry.ts'

const registry = await startFakeSchemaRegistry({ basicAuth: { username: 'api-key', password: 'registry-Secret-9d1' } })
t.teardown(() => registry.close())
const topics = topicNames('regauth')
const log = pino({ level: 'silent' })

t.test('the right credentials register the schemas', async (t) => {
  const codecs = await createAvroCodecs(
    {
      schemaRegistryUrl: registry.url,
      schemaRegistryAuth: { username: 'api-key', password: 'registry-Secret-9d1' },
      topics,
    },
    log,
  )
  t.ok(codecs.stored)
  t.ok(registry.requests.includes(`POST /subjects/${topics.events}-value/versions`))
})

t.test('a wrong password is CREDENTIALS_REJECTED naming the settings, without the password', async (t) => {
  const attempt = createAvroCodecs(
    {
      schemaRegistryUrl: registry.url,
      schemaRegistryAuth: { username: 'api-key', password: 'wrong-registry-pass' },
      topics,
    },
    log,
  )
  const err = await attempt.then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  )
  t.equal(err?.code, 'CREDENTIALS_REJECTED')
  t.match(
    err?.message,
    /SLUICE_SCHEMA_REGISTRY_USER \/ SLUICE_SCHEMA_REGISTRY_PASSWORD\): the schema registry answered 401/,
  )
  t.notMatch(err?.message, /wrong-registry-pass|registry-Secret/)
})
