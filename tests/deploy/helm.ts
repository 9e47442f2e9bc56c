// A real helm (built by tests/infra/provision.sh) rendering deploy/helm/sluice, and what the tests
// read from its output: manifests by kind, and the environment a container would start with, its
// Secret references resolved and its mounted Secret files written to a temporary directory.
import { execFile } from 'node:child_process'
import { cp, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { ROOT } from '../helpers/server.ts'
import type { Manifest } from './kube-validate.ts'

const run = promisify(execFile)
const cache = join(ROOT, 'tests/infra/.cache')
const helmDir = readdirSync(cache).find((d) => d.startsWith('helm-'))
if (!helmDir) throw new Error('no helm in tests/infra/.cache: run bash tests/infra/provision.sh')
export const helm = join(cache, helmDir, 'helm')
export const chart = join(ROOT, 'deploy/helm/sluice')
export const productionValues = join(ROOT, 'tests/deploy/values-production.yaml')

export type { Manifest }
export type Options = { values?: readonly string[]; set?: readonly string[] }

const flags = ({ values = [], set = [] }: Options) => [
  ...values.flatMap((f) => ['--values', f]),
  ...set.flatMap((s) => ['--set', s]),
]

export async function template(options: Options = {}): Promise<Manifest[]> {
  const { stdout } = await run(helm, ['template', 'rel', chart, ...flags(options)], { maxBuffer: 64 << 20 })
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest)
    .filter(Boolean)
}

/** helm's error output when rendering fails; undefined when it renders. */
export async function templateError(options: Options): Promise<string | undefined> {
  return run(helm, ['template', 'rel', chart, ...flags(options)]).then(
    () => undefined,
    (err) => String(err.stderr),
  )
}

/**
 * NOTES.txt as `helm install` prints it (helm template leaves it out, and install needs a cluster):
 * rendered through `tpl` by a template added to a copy of the chart.
 */
export async function notes(options: Options): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'sluice-chart-'))
  try {
    await cp(chart, copy, { recursive: true })
    await cp(join(copy, 'templates/NOTES.txt'), join(copy, 'notes.txt'))
    await writeFile(join(copy, 'templates/notes-check.yaml'), 'notes: {{ tpl (.Files.Get "notes.txt") . | toJson }}\n')
    const show = ['--show-only', 'templates/notes-check.yaml']
    const { stdout } = await run(helm, ['template', 'rel', copy, ...show, ...flags(options)])
    return parseAllDocuments(stdout)[0].toJS().notes
  } finally {
    await rm(copy, { recursive: true, force: true })
  }
}

export async function lint(options: Options = {}): Promise<string> {
  const { stdout } = await run(helm, ['lint', '--strict', chart, ...flags(options)])
  return stdout
}

export const ofKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind)
export const named = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name)

/** The content a test pretends an existing Secret holds under a key. */
export const secretValue = (secret: string, key: string) => `${secret}:${key}:0123456789abcdef`

export interface Pod {
  args: string[]
  env: NodeJS.ProcessEnv
  /** Mounted file path (as the container sees it) → where the test wrote it. */
  files: Map<string, string>
  /** The temporary directory holding those files: remove it after the test. */
  dir: string
}

/**
 * The command line and environment of a Deployment's container as Kubernetes would start it: Secret
 * references resolved (from the rendered Secrets, else secretValue), the files of Secret volumes
 * written under a temporary directory, and every environment value naming such a file redirected there.
 */
export async function podOf(deployment: Manifest, manifests: Manifest[]): Promise<Pod> {
  const spec = (deployment as any).spec.template.spec
  const container = spec.containers[0]
  const secretData = (name: string, key: string): string => {
    const rendered = named(manifests, 'Secret', name) as any
    return rendered?.stringData?.[key] ?? secretValue(name, key)
  }
  const root = await mkdtemp(join(tmpdir(), 'sluice-pod-'))
  const files = new Map<string, string>()
  for (const mount of container.volumeMounts ?? []) {
    const volume = spec.volumes.find((v: any) => v.name === mount.name)
    const sources = volume?.projected?.sources ?? (volume?.secret ? [{ secret: volume.secret }] : [])
    for (const { secret } of sources) {
      for (const item of secret?.items ?? []) {
        const inPod = `${mount.mountPath}/${item.path}`
        const local = join(root, inPod)
        await mkdir(dirname(local), { recursive: true })
        await writeFile(local, `${secretData(secret.name, item.key)}\n`)
        files.set(inPod, local)
      }
    }
  }
  const env: NodeJS.ProcessEnv = {}
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef
    const value: string = ref ? secretData(ref.name, ref.key) : e.value
    env[e.name] = files.get(value) ?? value
  }
  return { args: container.args, env, files, dir: root }
}
