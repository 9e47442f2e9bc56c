// bench/recovery: how soon a runner killed with kill -9 serves every function again. A distributed
// Sluice on the test Kafka (api, ingest, dedup + sink, router, runner: a process each) serves N
// functions; each runs once, the runner is killed, one event per function is sent while it is down,
// and it is restarted on its data dir at once (as a supervisor does). Measured from the restart's
// spawn: when the process is up, and when the last function ran its event. Each case runs on the
// Kafka client named (@platformatic/kafka is the default, kafkajs the other). Prints JSON and a table.
// Needs the test services (`node tests/infra/up.ts`).
// Usage: node --no-node-snapshot --conditions=sluice-source bench/recovery/run.ts
//          [--functions 17,50] [--clients platformatic,kafkajs] [--rounds 1]
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { report } from '../lib.ts'
import { auth, distributedEnv, startNode, type Node } from '../../tests/distributed/cluster.ts'
import { eventually, getJson, postJson, removeDir, tempDir } from '../../tests/helpers/server.ts'

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '17,50' },
    clients: { type: 'string', default: 'platformatic,kafkajs' },
    rounds: { type: 'string', default: '1' },
  },
})
const functionsFile = fileURLToPath(new URL('./functions.ts', import.meta.url))
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`)

/** The rounds of each function that ran, from the side-effects file. */
async function ran(file: string): Promise<Map<number, Set<number>>> {
  const rounds = new Map<number, Set<number>>()
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line) continue
    const [fn, round] = line.split('\t').map(Number)
    rounds.set(fn, (rounds.get(fn) ?? new Set()).add(round))
  }
  return rounds
}

async function recoveryCase(client: string, count: number, rounds: number) {
  const dir = await tempDir('sluice-recovery-')
  const sideEffects = join(dir, 'side-effects.tsv')
  await writeFile(sideEffects, '')
  const env: NodeJS.ProcessEnv = {
    ...distributedEnv(`recovery_${count}`),
    SLUICE_KAFKA_CLIENT: client,
    RECOVERY_FUNCTIONS: String(count),
    RECOVERY_SIDE_EFFECTS_FILE: sideEffects,
  }
  const nodes: Node[] = []
  const start = async (roles: string[], args: string[] = [], dataDir?: string) => {
    const node = await startNode(roles, env, args, 'start', { startTimeoutMs: 180_000, dataDir })
    nodes.push(node)
    return node
  }
  const runnerDir = join(dir, 'runner')
  const runner = () => start(['runner'], ['--functions', functionsFile], runnerDir)
  const rows = []
  try {
    const api = await start(['api'])
    const [ingest] = await Promise.all([start(['ingest']), start(['dedup', 'sink']), start(['router'])])
    log(`${client}, ${count} functions: pipeline up`)
    let current = await runner()
    log(`${client}, ${count} functions: runner up`)
    const registered = async () => (await getJson(`${api.url}/v1/functions`, auth)).body.data?.length ?? 0
    await eventually(async () => ((await registered()) >= count ? true : undefined), 120_000, 250)
    const key: string = (await postJson(`${api.url}/v1/keys`, { env: 'production' }, auth)).body.data.key
    const send = (round: number) =>
      eventually(
        async () => {
          const events = Array.from({ length: count }, (_, i) => ({ name: `recovery/fn-${i}`, data: { round } }))
          return (await postJson(`${ingest.url}/e/${key}`, events)).status === 200 ? true : undefined
        },
        60_000,
        100,
      )
    const allRan = (round: number) =>
      eventually(
        async () => {
          const r = await ran(sideEffects)
          return Array.from({ length: count }, (_, i) => r.get(i)?.has(round)).every(Boolean) ? true : undefined
        },
        180_000,
        50,
      )
    await send(0)
    await allRan(0)
    log(`${client}, ${count} functions: every function ran once`)
    for (let round = 1; round <= rounds; round++) {
      await current.kill('SIGKILL')
      await send(round)
      const spawned = Date.now()
      current = await runner()
      const upMs = Date.now() - spawned
      await allRan(round)
      const servingMs = Date.now() - spawned
      log(`${client} ${count} functions, round ${round}: up ${upMs} ms, every function served ${servingMs} ms`)
      rows.push({ client, functions: count, round, 'up ms': upMs, 'all serving ms': servingMs })
    }
  } finally {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')))
    await fetch(`${env.SLUICE_CLICKHOUSE_URL}/`, {
      method: 'POST',
      body: `DROP DATABASE IF EXISTS ${env.SLUICE_CLICKHOUSE_DATABASE}`,
    }).catch(() => {})
    await removeDir(dir)
  }
  return rows
}

const rows = []
for (const client of values.clients.split(','))
  for (const count of values.functions.split(',').map(Number))
    rows.push(...(await recoveryCase(client, count, Number(values.rounds))))
report('recovery', rows)
