// Serves the dashboard's static files (dashboard/). They are public; the data they show
// comes from the REST API, which asks for the signing key outside dev mode.
import { readFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import { openApiDocument } from './openapi.ts'

const FILES: Record<string, string> = { 'index.html': 'text/html; charset=utf-8', 'app.js': 'text/javascript; charset=utf-8', 'style.css': 'text/css; charset=utf-8' }

export async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  const contents = new Map<string, Buffer>()
  for (const name of Object.keys(FILES)) contents.set(name, await readFile(new URL(`../dashboard/${name}`, import.meta.url)))
  app.get('/', async (_request, reply) => reply.redirect('/dashboard/'))
  app.get<{ Params: { file?: string } }>('/dashboard/:file', async (request, reply) => {
    const name = request.params.file || 'index.html'
    const body = contents.get(name)
    if (!body) return reply.code(404).send({ status: 404, code: 'NOT_FOUND', error: `dashboard/${name}: no such file` })
    return reply.type(FILES[name]).header('cache-control', 'no-cache').send(body)
  })
  const openapi = openApiDocument(JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')).version)
  app.get('/v1/openapi.json', async () => openapi)
  app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/'))
}
