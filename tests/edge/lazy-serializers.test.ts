// api/http.ts's response serializers: none compiled at start, each route and status's compiled when
// it first answers and then kept, and what they send is what the response schema lets through.
import t from 'tap'
import Fastify from 'fastify'
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'
import { lazySerializers } from '../../api/http.ts'

t.test(
  'a serializer is compiled when its route and status first answer, once, and filters by its schema',
  async (t) => {
    const compiled: string[] = []
    const counting: SerializerFactory = (externalSchemas, options) => {
      const compile = SerializerSelector()(externalSchemas, options)
      return (route) => {
        compiled.push(`${route.method} ${route.url} ${route.httpStatus}`)
        return compile(route)
      }
    }
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers(counting) } } })
    t.teardown(() => app.close())
    const named = { type: 'object', properties: { name: { type: 'string' } } }
    const missing = { type: 'object', properties: { code: { type: 'string' } } }
    app.get('/a', { schema: { response: { 200: named, 404: missing } } }, async (request, reply) => {
      if ((request.query as { missing?: string }).missing) return reply.code(404).send({ code: 'NOT_FOUND', at: 'x' })
      return { name: 'a', secret: 'not in the schema' }
    })
    app.get('/b', { schema: { response: { 200: named } } }, async () => ({ name: 'b' }))
    await app.ready()
    t.same(compiled, [], 'nothing compiled at start')

    const first = await app.inject('/a')
    t.same(first.json(), { name: 'a' }, 'a field the schema does not name is not sent')
    t.same(compiled, ['GET /a 200'])
    t.same((await app.inject('/a')).json(), { name: 'a' })
    t.same(compiled, ['GET /a 200'], 'compiled once, kept')

    const notFound = await app.inject('/a?missing=1')
    t.same([notFound.statusCode, notFound.json()], [404, { code: 'NOT_FOUND' }])
    t.same(compiled, ['GET /a 200', 'GET /a 404'], "each status's own, when it first answers")
    t.notOk(
      compiled.some((c) => c.startsWith('GET /b')),
      'a route that never answered has none',
    )
  },
)
