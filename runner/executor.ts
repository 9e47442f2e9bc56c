// How one record of a run is executed: up to its next new step, reported as an Execution that
// runner/outcome.ts turns into the run's next record. The in-process executor replays a handler
// imported into this runner (client/step.ts); an app served over HTTP is another executor behind
// the same outcomes (sdk/), so the function runner never knows where a function's code lives.
import { executeFunction } from '../client/step.ts'
import type { Execution, ExecutionInput } from '../core/execution.ts'
import type { SluiceFunction } from '../client/function.ts'

export type Executor = (input: ExecutionInput) => Promise<Execution>

/** Executes `fn`'s handler in this process. */
export const inProcessExecutor =
  (fn: SluiceFunction): Executor =>
  (input) =>
    executeFunction(fn, input)
