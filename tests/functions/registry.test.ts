// control/functions.ts: the registry's list is sorted by ID, kept between calls while nothing
// changed (the event path asks for it on every pass), and follows every sync, replacement and removal.
import t from 'tap'
import type { ControlDocs, ControlKind, ControlStore } from '../../control/types.ts'
import { createEnvs } from '../../control/envs.ts'
import { createFunctionRegistry, type FunctionRegistration } from '../../control/functions.ts'

/** A ControlStore in a Map (as the embedded one holds its docs once loaded). */
function memoryControl(): ControlStore {
  const docs = new Map<string, unknown>()
  const of = (kind: ControlKind) => [...docs].filter(([k]) => k.startsWith(`${kind}\0`)).map(([, d]) => d)
  return {
    get: <K extends ControlKind>(kind: K, id: string) => docs.get(`${kind}\0${id}`) as ControlDocs[K] | undefined,
    list: <K extends ControlKind>(kind: K) => of(kind) as Array<ControlDocs[K]>,
    put: async (kind, id, doc) => void docs.set(`${kind}\0${id}`, doc),
    async putIf(kind, id, doc, expected) {
      if (docs.get(`${kind}\0${id}`) !== expected) return false
      docs.set(`${kind}\0${id}`, doc)
      return true
    },
    delete: async (kind, id) => void docs.delete(`${kind}\0${id}`),
    close: async () => {},
  }
}

const fn = (key: string, event: string, env = 'production'): FunctionRegistration => ({
  env,
  key,
  appId: 'app',
  functionId: key,
  name: key,
  triggers: [{ event }],
  retries: 0,
})

t.test('list: sorted by ID, kept while nothing changes, new after a sync', async (t) => {
  const control = memoryControl()
  const registry = createFunctionRegistry(control, createEnvs(control))
  await registry.sync([fn('b', 'x/b'), fn('a', 'x/a'), fn('c', 'x/c', 'preview')], { kind: 'all' })
  const first = registry.list()
  t.same(
    first.map((f) => f.id),
    ['preview/c', 'production/a', 'production/b'],
  )
  const again = registry.list()
  t.not(again, first, 'a list of its own each time: a caller may change it')
  t.ok(
    again.every((doc, i) => doc === first[i]),
    'the same docs',
  )
  t.same(
    registry.list('production').map((f) => f.id),
    ['production/a', 'production/b'],
  )

  await registry.sync([fn('b', 'x/b-renamed'), fn('d', 'x/d')], { kind: 'all' })
  t.same(
    registry.list().map((f) => [f.id, f.triggers]),
    [
      ['production/b', [{ event: 'x/b-renamed' }]],
      ['production/d', [{ event: 'x/d' }]],
    ],
    'a replaced doc, an added one, the removed ones gone',
  )
  await registry.sync([], { kind: 'all' })
  t.same(registry.list(), [])
})
