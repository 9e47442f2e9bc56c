// Validates rendered Kubernetes manifests against the API's own schemas, offline, with the models of
// the kubernetes-models package (generated from the Kubernetes OpenAPI document) and, for
// monitoring.coreos.com, of @kubernetes-models/prometheus-operator (generated from its CRDs).
// Two checks, because each misses what the other catches:
//   1. the package's JSON-schema validator (`validate()`): types, required fields, enums and formats
//      (quantities, int-or-string). It lets unknown fields through: the schemas leave objects open.
//   2. the package's TypeScript declarations: each manifest, written out as an object literal that must
//      satisfy its kind's interface, is type-checked by the TypeScript compiler, whose excess-property
//      check rejects an unknown or misplaced field at any depth, as `kubectl apply --validate=strict` does.
// A kind with no model fails: nothing is waved through unchecked.
import { dirname, join } from 'node:path'
import ts from 'typescript'
import { ROOT } from '../helpers/server.ts'

export interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  [field: string]: unknown
}

/** The module that models a kind: `kubernetes-models/<group>/<version>/<Kind>` (the core group is `v1`). */
function modelModule(m: Manifest): string {
  const group = m.apiVersion.includes('/') ? m.apiVersion.split('/')[0] : ''
  const pkg = group === 'monitoring.coreos.com' ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models'
  return `${pkg}/${m.apiVersion}/${m.kind}`
}

const label = (m: Manifest) => `${m.kind}/${m.metadata?.name}`

/** Problems found, one line each (`Kind/name: …`); empty when every manifest is valid. */
export async function validateManifests(manifests: Manifest[]): Promise<string[]> {
  const problems: string[] = []
  for (const m of manifests) {
    let model: { new (data: unknown): { validate(): void } }
    try {
      model = (await import(modelModule(m)))[m.kind]
    } catch {
      problems.push(`${label(m)}: no model of ${m.apiVersion} ${m.kind} to validate it against`)
      continue
    }
    try {
      new model(m).validate()
    } catch (err) {
      problems.push(`${label(m)}: ${(err as Error).message}`)
    }
  }
  problems.push(...typeCheck(manifests))
  return problems
}

/** Check 2: the manifests as `satisfies I<Kind>` literals in one virtual module, compiled in memory. */
function typeCheck(manifests: Manifest[]): string[] {
  const file = join(ROOT, 'tests/deploy/rendered-manifests.check.ts')
  const lines: string[] = []
  const owner: string[] = [] // line → manifest label
  manifests.forEach((m, i) => {
    lines.push(`import type { I${m.kind} as T${i} } from '${modelModule(m)}'`)
    owner.push(label(m))
  })
  manifests.forEach((m, i) => {
    for (const line of `export const m${i} = ${JSON.stringify(m, null, 2)} satisfies T${i}`.split('\n')) {
      lines.push(line)
      owner.push(label(m))
    }
  })
  const source = lines.join('\n')
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest)
  host.fileExists = (name) => name === file || fileExists(name)
  host.readFile = (name) => (name === file ? source : readFile(name))
  const program = ts.createProgram([file], options, host)
  const sourceFile = program.getSourceFile(file)!
  return ts.getPreEmitDiagnostics(program, sourceFile).map((d) => {
    const line = d.start === undefined ? 0 : sourceFile.getLineAndCharacterOfPosition(d.start).line
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n').slice(-1)[0].trim()
    const at = d.start === undefined ? '' : `${lines[line].trim()} → `
    return `${owner[line] ?? dirname(file)}: ${at}${text}`
  })
}
