// Builds the dashboard (dashboard/src, Preact + CodeMirror + uPlot) into dist/dashboard/ with esbuild:
// one minified app.js, app.css and index.html, served by api/dashboard.ts. Never committed.
// `--if-stale` builds only when the output is missing or older than a source file (scripts/start.sh).
import { build } from 'esbuild'
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const DASHBOARD_SRC = fileURLToPath(new URL('../dashboard/', import.meta.url))
export const DASHBOARD_OUT = fileURLToPath(new URL('../dist/dashboard/', import.meta.url))

async function newestMtimeMs(dir: string): Promise<number> {
  let newest = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs)
  }
  return newest
}

/** True when dist/dashboard/app.js is missing or older than a file under dashboard/. */
export async function dashboardIsStale(): Promise<boolean> {
  const built = await stat(join(DASHBOARD_OUT, 'app.js')).then(
    (s) => s.mtimeMs,
    () => 0,
  )
  return built === 0 || (await newestMtimeMs(DASHBOARD_SRC)) > built
}

export async function buildDashboard(): Promise<void> {
  // A clean folder: chunk names change with their content, and the server serves every file in it.
  await rm(DASHBOARD_OUT, { recursive: true, force: true })
  await mkdir(DASHBOARD_OUT, { recursive: true })
  await build({
    entryPoints: { app: join(DASHBOARD_SRC, 'src/main.tsx') },
    outdir: DASHBOARD_OUT,
    bundle: true,
    // CodeMirror loads as its own chunk, only on the webhook page (dashboard/src/ui/lazy-editor.tsx).
    splitting: true,
    chunkNames: 'chunk-[hash]',
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  })
  await copyFile(join(DASHBOARD_SRC, 'index.html'), join(DASHBOARD_OUT, 'index.html'))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.argv.includes('--if-stale') || (await dashboardIsStale())) {
    await buildDashboard()
    console.log(`dashboard built into ${DASHBOARD_OUT}`)
  }
}
