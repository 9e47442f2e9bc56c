// Builds the dashboard (dashboard/src, Preact + CodeMirror + uPlot) into dist/dashboard/ with esbuild:
// one minified app.js, app.css and index.html, served by api/dashboard.ts. Never committed.
// `--if-stale` builds only when the output is missing or older than a source file (scripts/start.sh).
import { build, type Plugin } from 'esbuild'
import { copyFile, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const DASHBOARD_SRC = fileURLToPath(new URL('../dashboard/', import.meta.url))
export const DASHBOARD_OUT = fileURLToPath(new URL('../dist/dashboard/', import.meta.url))
/** The example queries of the Insights page come from here, so the page and the doc cannot differ. */
export const CLICKHOUSE_DOC = fileURLToPath(new URL('../docs/clickhouse.md', import.meta.url))

/** The SQL blocks of a Markdown text's section `## <section>`, each with the `###` heading above it. */
export function sqlExamples(markdown: string, section = 'Example queries'): Array<{ title: string; sql: string }> {
  const body = markdown.split(`\n## ${section}\n`)[1]?.split('\n## ')[0] ?? ''
  return [...body.matchAll(/^### (.+)\n(?:(?!###)[\s\S])*?```sql\n([\s\S]*?)\n```/gm)].map((m) => ({
    title: m[1].replace(/`/g, '').trim(),
    sql: m[2].trim(),
  }))
}

/** `import examples from 'sluice:clickhouse-examples'`: docs/clickhouse.md's example queries, as data. */
const clickhouseExamples: Plugin = {
  name: 'clickhouse-examples',
  setup(build) {
    build.onResolve({ filter: /^sluice:clickhouse-examples$/ }, (args) => ({ path: args.path, namespace: 'sluice' }))
    build.onLoad({ filter: /.*/, namespace: 'sluice' }, async () => ({
      contents: JSON.stringify(sqlExamples(await readFile(CLICKHOUSE_DOC, 'utf8'))),
      loader: 'json',
      watchFiles: [CLICKHOUSE_DOC],
    }))
  },
}

async function newestMtimeMs(dir: string): Promise<number> {
  let newest = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs)
  }
  return newest
}

/** True when dist/dashboard/app.js is missing or older than a file under dashboard/ or the ClickHouse doc. */
export async function dashboardIsStale(): Promise<boolean> {
  const built = await stat(join(DASHBOARD_OUT, 'app.js')).then(
    (s) => s.mtimeMs,
    () => 0,
  )
  const doc = (await stat(CLICKHOUSE_DOC)).mtimeMs
  return built === 0 || Math.max(await newestMtimeMs(DASHBOARD_SRC), doc) > built
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
    plugins: [clickhouseExamples],
  })
  await copyFile(join(DASHBOARD_SRC, 'index.html'), join(DASHBOARD_OUT, 'index.html'))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.argv.includes('--if-stale') || (await dashboardIsStale())) {
    await buildDashboard()
    console.log(`dashboard built into ${DASHBOARD_OUT}`)
  }
}
