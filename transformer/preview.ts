// Preview: a sample request through the same pipeline (same sandbox, same validation and
// allow/deny lists) without publishing or recording anything. An unsaved transform may be
// tried too; it is cached under its content hash, apart from the saved versions.
import { createHash } from 'node:crypto'
import type { WebhookDoc } from '../control/types.ts'
import { canonicalHeaders } from '../core/canonical.ts'
import { runPipeline, type PipelineDeps, type PipelineLimits, type PipelineResult } from './pipeline.ts'
import { compilePosition, locatingSource, positionOf, type SourcePosition } from './preview-locate.ts'

/** A pipeline result; an error of the transform's own code says where in it (preview-locate.ts). */
export type PreviewResult = PipelineResult & { position?: SourcePosition }

export interface PreviewInput {
  /** The body as text, exactly as a sender would post it. */
  text: string
  headers: Record<string, string>
  query: Record<string, string[]>
  /** Overrides the saved transform: try a change before saving it; null previews the default. */
  transform?: string | null
}

export function createPreview(deps: PipelineDeps, limits: PipelineLimits) {
  return async (webhook: WebhookDoc, input: PreviewInput): Promise<PreviewResult> => {
    const headers = canonicalHeaders({ 'content-type': 'application/json', ...lowerKeys(input.headers) })
    const request = { text: input.text, headers, query: input.query }
    if (input.transform === null) return runPipeline(deps, { ...webhook, transform: undefined }, request, limits)
    const source = input.transform ?? webhook.transform
    if (source === undefined) return runPipeline(deps, webhook, request, limits)
    const hash = createHash('sha256').update(source).digest('hex')
    const key = input.transform === undefined ? undefined : `preview:${hash}`
    const result = await runPipeline(deps, webhook, request, limits, source, key)
    if (result.kind !== 'deadLetter') return result
    const { code, message } = result.error
    if (code === 'TRANSFORM_COMPILE') return { ...result, position: compilePosition(message) }
    if (code !== 'TRANSFORM_THREW') return result
    // Thrown by the user's code: once more, instrumented, only to learn where.
    const located = await runPipeline(deps, webhook, request, limits, locatingSource(source), `preview-locate:${hash}`)
    const position = located.kind === 'deadLetter' ? positionOf(message, located.error.message) : undefined
    return position ? { ...result, position } : result
  }
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
}

export type Preview = ReturnType<typeof createPreview>
