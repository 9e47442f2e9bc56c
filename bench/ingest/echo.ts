// The baseline: a bare fastify server that parses a JSON body and echoes a small answer.
import Fastify from 'fastify'

const app = Fastify()
app.post('/e/:key', async (request) => ({ ids: [Array.isArray(request.body) ? request.body.length : 1], status: 200 }))
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
process.stdout.write(`listening http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`)
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
