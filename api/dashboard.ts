// Serves the dashboard's static files (dashboard/), the OpenAPI document and its rendered
// reference (/docs, from the @fastify/swagger-ui package: no CDN). They are public; the data
// the dashboard shows comes from the REST API, which asks for the signing key outside dev mode.
import { readFile } from 'node:fs/promises'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
}

const OpenApiDocument = Type.Object(
  {
    openapi: Type.Literal('3.1.0'),
    info: Type.Object({}, { additionalProperties: true }),
    paths: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: true, description: 'An OpenAPI 3.1 document' },
)

export async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  const contents = new Map<string, Buffer>()
  for (const name of Object.keys(FILES))
    contents.set(name, await readFile(new URL(`../dashboard/${name}`, import.meta.url)))
  app.get('/', async (_request, reply) => reply.redirect('/dashboard/'))
  app.get<{ Params: { file?: string } }>('/dashboard/:file', async (request, reply) => {
    const name = request.params.file || 'index.html'
    const body = contents.get(name)
    if (!body) return reply.code(404).send({ status: 404, code: 'NOT_FOUND', error: `dashboard/${name}: no such file` })
    return reply.type(FILES[name]).header('cache-control', 'no-cache').send(body)
  })
  app.get(
    '/v1/openapi.json',
    { schema: { tags: ['Reference'], summary: 'This document', response: { 200: OpenApiDocument } } },
    async () => app.swagger(),
  )
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/'))
}
