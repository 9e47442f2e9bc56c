// This process's name for Kafka's static group membership (bus/kafka-config.ts `instanceId`): kept in
// its data dir, so a process restarted on the same dir (a container restarted in its pod, a crashed
// process started again) rejoins its groups under the same name and takes its partitions back at once.
// One process per data dir (RocksDB locks it), so no two live processes share a name; a fresh dir
// gets a new one, and its predecessor's partitions move once that one's session expires, as before.
import { randomUUID } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

const FILE = 'kafka-instance-id'

export async function instanceIdOf(dataDir: string): Promise<string> {
  const path = join(dataDir, FILE)
  const kept = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  if (kept?.trim()) return kept.trim()
  const id = randomUUID()
  // Whole or absent: a crash mid-write leaves no half name.
  await writeFile(`${path}.tmp`, id)
  await rename(`${path}.tmp`, path)
  return id
}
