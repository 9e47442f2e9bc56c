// A FAKE Confluent Schema Registry: an in-process HTTP server speaking the subset of the
// registry's REST API that @confluentinc/schemaregistry's client and a plain consumer use.
// It exists because no real registry can run here: Confluent's is not on Maven Central, Karapace
// is not on PyPI, and Apicurio's app jar on Maven Central needs a Quarkus build to run. It follows
// the documented behaviour: ids are global, and the same schema text under several subjects (or
// registered twice) gets the same id.
//   POST /subjects/<subject>/versions  {schema, schemaType?}  → {id}
//   GET  /schemas/ids/<id>[?subject=…]                        → {schema}
//   GET  /subjects                                            → [subject…]
//   GET  /subjects/<subject>/versions/latest                  → {subject, id, version, schema}
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeSchemaRegistry {
  url: string
  /** Every request, as `METHOD path`, so a test can see what the client asked. */
  requests: string[]
  close(): Promise<void>
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json'

/** `basicAuth`: answer 401 unless the request carries these credentials (as Confluent Cloud does). */
export async function startFakeSchemaRegistry(
  options: { basicAuth?: { username: string; password: string } } = {},
): Promise<FakeSchemaRegistry> {
  const idsBySchema = new Map<string, number>()
  const schemas: string[] = []
  const versions = new Map<string, number[]>()
  const requests: string[] = []

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://registry')
    requests.push(`${req.method} ${url.pathname}`)
    if (options.basicAuth) {
      const expected = `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64')}`
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'content-type': CONTENT_TYPE })
        res.end(JSON.stringify({ error_code: 401, message: 'Unauthorized' }))
        return
      }
    }
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': CONTENT_TYPE })
      res.end(JSON.stringify(body))
    }
    const notFound = (code: number, message: string) => send(404, { error_code: code, message })
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent)

    if (req.method === 'POST' && parts.length === 3 && parts[0] === 'subjects' && parts[2] === 'versions') {
      const body = JSON.parse(await readBody(req)) as { schema: string; schemaType?: string }
      if ((body.schemaType ?? 'AVRO') !== 'AVRO')
        return send(422, { error_code: 42201, message: 'only AVRO in this fake' })
      const canonical = JSON.stringify(JSON.parse(body.schema))
      let id = idsBySchema.get(canonical)
      if (id === undefined) {
        schemas.push(body.schema)
        id = schemas.length
        idsBySchema.set(canonical, id)
      }
      const subjectVersions = versions.get(parts[1]) ?? versions.set(parts[1], []).get(parts[1])!
      if (!subjectVersions.includes(id)) subjectVersions.push(id)
      return send(200, { id })
    }
    if (req.method === 'GET' && parts.length === 3 && parts[0] === 'schemas' && parts[1] === 'ids') {
      const schema = schemas[Number(parts[2]) - 1]
      return schema === undefined ? notFound(40403, 'Schema not found') : send(200, { schema })
    }
    if (req.method === 'GET' && parts.length === 1 && parts[0] === 'subjects') return send(200, [...versions.keys()])
    if (
      req.method === 'GET' &&
      parts.length === 4 &&
      parts[0] === 'subjects' &&
      parts[2] === 'versions' &&
      parts[3] === 'latest'
    ) {
      const subjectVersions = versions.get(parts[1])
      if (!subjectVersions) return notFound(40401, 'Subject not found')
      const id = subjectVersions[subjectVersions.length - 1]
      return send(200, { subject: parts[1], id, version: subjectVersions.length, schema: schemas[id - 1] })
    }
    send(404, { error_code: 404, message: `the fake registry does not implement ${req.method} ${url.pathname}` })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { 'content-type': CONTENT_TYPE })
      res.end(JSON.stringify({ error_code: 50001, message: String(err) }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
