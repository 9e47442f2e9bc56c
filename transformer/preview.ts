// Preview: a sample request through the same pipeline (same sandbox, same validation and
// allow/deny lists) without publishing or recording anything. An unsaved transform may be
// tried too; it is cached under its content hash, apart from the saved versions.
import { createHash } from 'node:crypto'
import type { WebhookDoc } from '../control/types.ts'
import { canonicalHeaders } from '../core/canonical.ts'
import { runPipeline, type PipelineDeps, type PipelineLimits, type PipelineResult } from './pipeline.ts'

export interface PreviewInput {
  /** The body as text, exactly as a sender would post it. */
  text: string
  headers: Record<string, string>
  query: Record<string, string[]>
  /** Overrides the saved transform: try a change before saving it; null previews the default. */
  transform?: string | null
}

export function createPreview(deps: PipelineDeps, limits: PipelineLimits) {
  return async (webhook: WebhookDoc, input: PreviewInput): Promise<PipelineResult> => {
    const headers = canonicalHeaders({ 'content-type': 'application/json', ...lowerKeys(input.headers) })
    const request = { text: input.text, headers, query: input.query }
    if (input.transform === undefined) return runPipeline(deps, webhook, request, limits)
    if (input.transform === null) return runPipeline(deps, { ...webhook, transform: undefined }, request, limits)
    const key = 'preview:' + createHash('sha256').update(input.transform).digest('hex')
    return runPipeline(deps, webhook, request, limits, input.transform, key)
  }
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
}

export type Preview = ReturnType<typeof createPreview>
