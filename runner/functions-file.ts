// Loads a user's functions module (TypeScript or JavaScript) and watches it for `--watch`.
import { watch, type FSWatcher } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SluiceError } from '../core/errors.ts'
import { isSluiceFunction, type SluiceFunction } from '../client/function.ts'

let loads = 0

/**
 * Every exported function definition (also inside exported arrays or a default-exported object).
 * Each load imports a fresh copy of the module (a query string busts the ESM cache), so a reload
 * sees the edited file; modules it imports stay cached.
 */
export async function loadFunctionsFile(path: string): Promise<SluiceFunction[]> {
  const url = `${pathToFileURL(resolve(path)).href}?load=${++loads}`
  let module: Record<string, unknown>
  try {
    module = await import(url)
  } catch (err) {
    throw new SluiceError('CONFIG_INVALID', `functions file ${path}: ${(err as Error).message}`, { cause: err })
  }
  const found = new Set<SluiceFunction>()
  const visit = (value: unknown, depth: number) => {
    if (isSluiceFunction(value)) found.add(value)
    else if (depth < 2 && Array.isArray(value)) value.forEach((v) => visit(v, depth + 1))
    else if (depth < 1 && typeof value === 'object' && value !== null)
      Object.values(value).forEach((v) => visit(v, depth + 1))
  }
  for (const value of Object.values(module)) visit(value, 0)
  return [...found]
}

/** Calls `onChange` once per burst of changes (editors write files in several steps). */
export function watchFunctionsFile(path: string, onChange: () => void, debounceMs = 100): { close(): void } {
  const file = basename(path)
  let timer: NodeJS.Timeout | undefined
  // The directory, not the file: editors that save by rename would end a watch on the file.
  const watcher: FSWatcher = watch(dirname(resolve(path)), (_event, name) => {
    if (name !== null && name.toString() !== file) return
    clearTimeout(timer)
    timer = setTimeout(onChange, debounceMs)
  })
  return {
    close() {
      clearTimeout(timer)
      watcher.close()
    },
  }
}
