// FNV-1a over the key's UTF-8 bytes: stable across processes and restarts, cheap on the
// hot path. (The Kafka adapter uses kafkajs' own murmur2 partitioner, as other Kafka clients do.)
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % partitions
}
