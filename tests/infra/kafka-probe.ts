import { connect } from 'node:net'

/**
 * One Metadata request (v4) to exactly one broker. kafkajs cannot do this: its
 * admin sends metadata requests to any broker it has discovered, so "is broker 2
 * ready" would be answered by broker 1. Readiness and fencing are per-broker
 * facts (each applies the metadata log on its own schedule), hence this probe.
 * v4 is not flexible (no tagged fields) and is served by Kafka 2.x through 4.x.
 */
export type BrokerMetadata = {
  brokerIds: number[]
  controllerId: number
  topics: { name: string; errorCode: number; partitions: { id: number; leader: number; errorCode: number }[] }[]
}

export async function probeMetadata(
  host: string,
  port: number,
  topics: string[] = [],
  timeoutMs = 2000,
): Promise<BrokerMetadata> {
  const response = await roundTrip(host, port, metadataRequest(topics), timeoutMs)
  return parseMetadataResponse(response)
}

const METADATA_API_KEY = 3
const METADATA_VERSION = 4
const CORRELATION_ID = 1

function metadataRequest(topics: string[]): Buffer {
  const clientId = Buffer.from('sluice-test-probe')
  const names = topics.map((topic) => Buffer.from(topic))
  const body = [
    int16(METADATA_API_KEY),
    int16(METADATA_VERSION),
    int32(CORRELATION_ID),
    int16(clientId.length),
    clientId,
    int32(names.length),
    ...names.flatMap((name) => [int16(name.length), name]),
    Buffer.from([0]), // allow_auto_topic_creation = false
  ]
  const payload = Buffer.concat(body)
  return Buffer.concat([int32(payload.length), payload])
}

async function roundTrip(host: string, port: number, request: Buffer, timeoutMs: number): Promise<Buffer> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host, port })
    let received = Buffer.alloc(0)
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`no metadata answer from ${host}:${port} in ${timeoutMs} ms`)),
    )
    socket.on('connect', () => socket.write(request))
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk])
      if (received.length >= 4 && received.length >= 4 + received.readInt32BE(0)) {
        socket.end()
        resolve(received.subarray(4, 4 + received.readInt32BE(0)))
      }
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`${host}:${port} closed the connection before answering`)))
  })
}

function parseMetadataResponse(buffer: Buffer): BrokerMetadata {
  let offset = 0
  /** Reads `size` bytes at the cursor and moves past them. */
  const take = <T>(size: number, read: (at: number) => T): T => {
    offset += size
    return read(offset - size)
  }
  const readInt8 = () => take(1, (at) => buffer.readInt8(at))
  const readInt16 = () => take(2, (at) => buffer.readInt16BE(at))
  const readInt32 = () => take(4, (at) => buffer.readInt32BE(at))
  const readString = () => {
    const length = readInt16()
    if (length < 0) return null
    const value = buffer.toString('utf8', offset, offset + length)
    offset += length
    return value
  }
  const readArray = <T>(readItem: () => T): T[] => Array.from({ length: Math.max(0, readInt32()) }, readItem)

  if (readInt32() !== CORRELATION_ID) throw new Error('metadata response for another request')
  readInt32() // throttle_time_ms
  const brokerIds = readArray(() => {
    const nodeId = readInt32()
    readString() // host
    readInt32() // port
    readString() // rack
    return nodeId
  })
  readString() // cluster_id
  const controllerId = readInt32()
  const topics = readArray(() => {
    const errorCode = readInt16()
    const name = readString() ?? ''
    readInt8() // is_internal
    const partitions = readArray(() => {
      const partitionError = readInt16()
      const id = readInt32()
      const leader = readInt32()
      readArray(readInt32) // replica_nodes
      readArray(readInt32) // isr_nodes
      return { id, leader, errorCode: partitionError }
    })
    return { name, errorCode, partitions }
  })
  return { brokerIds, controllerId, topics }
}

function int16(value: number): Buffer {
  const buffer = Buffer.alloc(2)
  buffer.writeInt16BE(value)
  return buffer
}

function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4)
  buffer.writeInt32BE(value)
  return buffer
}
