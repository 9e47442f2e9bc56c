// Functions served by bench/recovery's runner: RECOVERY_FUNCTIONS of them (17 by default), each
// triggered by an event of its own (`recovery/fn-<i>`), each one step that appends its function and
// event to RECOVERY_SIDE_EFFECTS_FILE, so the bench sees when every function serves again.
import { appendFileSync } from 'node:fs'
import { Client } from 'sluice/client'

const client = new Client({ id: 'recovery' })
const count = Number(process.env.RECOVERY_FUNCTIONS ?? 17)

export const functions = Array.from({ length: count }, (_, i) =>
  client.createFunction({ id: `fn-${i}` }, { event: `recovery/fn-${i}` }, async ({ event, step }) => {
    await step.run('mark', () => {
      appendFileSync(process.env.RECOVERY_SIDE_EFFECTS_FILE!, `${i}\t${event.data.round}\n`)
    })
  }),
)
