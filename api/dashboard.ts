// Serves the dashboard: the files esbuild built into dist/dashboard/ (scripts/build-dashboard.ts, run
// by `npm start`, `npm run build` and the test command), the OpenAPI document and its rendered
// reference (/docs, from the @fastify/swagger-ui package: no CDN). They are public; the data they
// show comes from the REST API, which asks for the signing key outside dev mode.
import { readFile, readdir } from 'node:fs/promises'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'

// From source (api/dashboard.ts) the build is in ../dist/dashboard; in the npm package (dist/api/dashboard.js), ../dashboard.
const BUILDS = [new URL('../dist/dashboard/', import.meta.url), new URL('../dashboard/', import.meta.url)]
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}
const NOT_BUILT =
  '<!doctype html><html lang="en"><title>Sluice</title><h1>The dashboard is not built</h1>' +
  '<p>Run <code>npm run build:dashboard</code> (or start Sluice with <code>npm start</code>, which builds it) and reload.</p></html>'

/** The built files by name; read once, or again while the build is missing (a build may land later). */
async function builtFiles(): Promise<Map<string, Buffer> | null> {
  for (const dir of BUILDS) {
    const names = await readdir(dir).catch((): string[] => [])
    if (!names.includes('index.html') || !names.includes('app.js')) continue
    const files = new Map<string, Buffer>()
    for (const name of names)
      if (TYPES[name.slice(name.lastIndexOf('.'))]) files.set(name, await readFile(new URL(name, dir)))
    return files
  }
  return null
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
  let files = await builtFiles()
  app.get('/', async (_request, reply) => reply.redirect('/dashboard/'))
  app.get<{ Params: { file?: string } }>('/dashboard/:file', async (request, reply) => {
    files ??= await builtFiles()
    if (!files) return reply.code(503).type(TYPES['.html']).send(NOT_BUILT)
    const name = request.params.file || 'index.html'
    const body = files.get(name)
    if (!body) return reply.code(404).send({ status: 404, code: 'NOT_FOUND', error: `dashboard/${name}: no such file` })
    return reply
      .type(TYPES[name.slice(name.lastIndexOf('.'))])
      .header('cache-control', 'no-cache')
      .send(body)
  })
  app.get(
    '/v1/openapi.json',
    { schema: { tags: ['Reference'], summary: 'This document', response: { 200: OpenApiDocument } } },
    async () => app.swagger(),
  )
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/'))
}
