// Concurrent pushes of one event name's schema (issue 52, item 4), shared by the embedded and the
// distributed tests: every push answered 200 is a stored version, and no two schemas share a number.
import type { Test } from 'tap'

export type Push = (schema: unknown) => Promise<{ status: number; body: any }>

/** Compatible with one another (only `title` differs), so each push is a new version. */
export const raceSchema = (title: string) => ({ type: 'object', title, properties: { n: { type: 'number' } } })

/** `rounds` of pushes, each round one push through every pusher at once. */
export async function racePushes(pushers: Push[], rounds: number) {
  const answers: Array<{ title: string; status: number; body: any }> = []
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      pushers.map(async (push, p) => {
        const title = `round ${round} pusher ${p}`
        const answer = await push(raceSchema(title))
        answers.push({ title, ...answer })
      }),
    )
  }
  return answers
}

export function checkRace(
  t: Test,
  answers: Awaited<ReturnType<typeof racePushes>>,
  stored: Array<{ version: number; schema: any }>,
): void {
  for (const answer of answers) {
    if (answer.status === 200) continue
    t.same([answer.status, answer.body.code], [409, 'SCHEMA_VERSION_CONFLICT'], `${answer.title}: only a conflict`)
    t.match(answer.body.error, /^schema: .* \(current version \d+\); push it again$/)
  }
  const numbers = stored.map((v) => v.version)
  t.same(
    numbers,
    [...new Set(numbers)].sort((a, b) => a - b),
    'no two stored schemas share a number',
  )
  const titles = stored.map((v) => v.schema.title)
  t.equal(new Set(titles).size, titles.length, 'no schema stored twice')
  const answered = answers.filter((a) => a.status === 200)
  t.ok(answered.length >= answers.length / 2, 'most pushes are stored')
  for (const answer of answered) {
    const version = stored.find((v) => v.version === answer.body.data.version)
    t.equal(version?.schema.title, answer.title, `${answer.title}: its answered version holds it`)
  }
  t.equal(stored.length, answered.length, 'every stored version was answered 200')
}
