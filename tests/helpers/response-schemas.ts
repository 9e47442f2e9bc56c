// Every REST response a test receives is checked against the schema its route declares for
// that status (api/schemas.ts). startServer installs the check; a file whose responses broke a
// declared schema fails at its end, listing them, whatever its own assertions were.
import { Ajv, type ValidateFunction } from 'ajv'
import type { FastifyInstance } from 'fastify'

const ajv = new Ajv({ strict: false, allErrors: true })
const compiled = new WeakMap<object, ValidateFunction>()
const violations: string[] = []
let installed = false

/** A fastify plugin that records responses off their declared schema; fails the test file at its end. */
export function responseSchemaCheck() {
  if (!installed) {
    installed = true
    // tap is loaded here, in a test that starts a server, not when this module is: scripts import
    // tests/helpers/server.ts too (bench/chaos), and loading tap starts its root test and its timeout.
    void import('tap').then(({ default: t }) =>
      t.teardown(() => {
        if (violations.length > 0) throw new Error(`responses off their declared schema:\n${violations.join('\n')}`)
      }),
    )
  }
  const plugin = async (app: FastifyInstance) => {
    app.addHook('onSend', async (request, reply, payload) => {
      const url = request.routeOptions.url ?? ''
      if (!url.startsWith('/v1/')) return payload
      const route = `${request.method} ${url} ${reply.statusCode}`
      const responses = request.routeOptions.schema?.response as Record<string, object> | undefined
      const schema = responses?.[reply.statusCode]
      if (!schema) {
        violations.push(`${route}: no response schema declared for this status`)
        return payload
      }
      const validate = compiled.get(schema) ?? ajv.compile(schema)
      if (!compiled.has(schema)) compiled.set(schema, validate)
      if (!validate(JSON.parse(String(payload)))) violations.push(`${route}: ${ajv.errorsText(validate.errors)}`)
      return payload
    })
  }
  // Not encapsulated: the hook sees the routes of every plugin registered after it (fastify-plugin's marker).
  Object.assign(plugin, { [Symbol.for('skip-override')]: true })
  return plugin
}
