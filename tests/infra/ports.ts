import { createServer } from 'node:net'

/** A loopback port that was free a moment ago: the OS picks it when we bind port 0. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))))
    })
  })
}

/**
 * Several distinct free ports. Each is closed before the next is taken, so the OS
 * could hand the same one out twice; we ask again until they differ.
 */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
}
