// The kill schedule: one target at a time, at random moments, each killed with SIGKILL and
// restarted after a random pause. The first kills cover every role and a broker once, in
// random order; the rest pick at random. Seeded, so a run's kill order and gaps replay.
import { CHAOS_ROLES, type ChaosCluster, type ChaosRole } from './cluster.ts'
import type { Random } from './random.ts'

export type KillTarget = ChaosRole | 'broker'
export const KILL_TARGETS: readonly KillTarget[] = [...CHAOS_ROLES, 'broker']

export interface Kill {
  target: KillTarget
  detail: string
  atMs: number
  downMs: number
  restartMs: number
}

export interface KillOptions {
  kills: number
  durationMs: number
  maxDownMs: number
}

export async function runKills(
  cluster: ChaosCluster,
  random: Random,
  options: KillOptions,
  log: (line: string) => void = () => {},
): Promise<Kill[]> {
  const targets = [...random.shuffle(KILL_TARGETS)]
  while (targets.length < options.kills) targets.push(random.pick(KILL_TARGETS))
  const started = Date.now()
  const kills: Kill[] = []
  for (const [i, target] of targets.slice(0, options.kills).entries()) {
    // Spread the kills over the duration: the next one at a random moment of its slot.
    const slotEnd = started + ((i + 1) * options.durationMs) / options.kills
    const at = Math.max(Date.now(), slotEnd - random.int(0, options.durationMs / options.kills))
    await new Promise((r) => setTimeout(r, at - Date.now()))
    const downMs = random.int(0, options.maxDownMs)
    const killedAt = Date.now()
    let detail: string
    if (target === 'broker') {
      const index = random.int(0, cluster.kafka.brokers.length - 1)
      detail = `broker ${index + 1}`
      await cluster.kafka.stopBroker(index, { signal: 'SIGKILL' })
      await new Promise((r) => setTimeout(r, downMs))
      const restarting = Date.now()
      await cluster.kafka.startBroker(index)
      kills.push({ target, detail, atMs: killedAt - started, downMs, restartMs: Date.now() - restarting })
    } else {
      const freshDataDir = random.next() < 0.5
      detail = freshDataDir ? 'restarted on an empty data dir' : 'restarted on its data dir'
      await cluster.kill(target)
      await new Promise((r) => setTimeout(r, downMs))
      const restarting = Date.now()
      await cluster.restart(target, { freshDataDir })
      kills.push({ target, detail, atMs: killedAt - started, downMs, restartMs: Date.now() - restarting })
    }
    const when = `at ${killedAt - started} ms, down ${Date.now() - killedAt} ms`
    log(`kill ${i + 1}/${options.kills}: ${target} (${detail}) ${when}`)
  }
  return kills
}
