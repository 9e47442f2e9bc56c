// Registered functions with their recent success rate (completed vs failed of the last 100 runs).
import { api, currentEnv, query } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { duration, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'

const RECENT = 100

async function load(env: string) {
  const { data: functions } = await api('GET', `/v1/functions${query({ env })}`)
  const rates = await Promise.all(
    functions.map(async (f: any) => {
      const { data: runs } = await api(
        'GET',
        `/v1/runs${query({ function: `${f.app_id}-${f.function_id}`, env: f.env, limit: RECENT })}`,
      )
      const done = runs.filter((r: any) => r.status === 'completed' || r.status === 'failed')
      return {
        total: runs.length,
        done: done.length,
        completed: done.filter((r: any) => r.status === 'completed').length,
      }
    }),
  )
  return functions.map((f: any, i: number) => ({ ...f, rate: rates[i] }))
}

export function FunctionsPage() {
  const env = currentEnv.value
  const functions = useApi(() => load(env), [env])
  return (
    <>
      <h1 tabIndex={-1}>Functions</h1>
      <ErrorMessage error={functions.error} />
      {functions.loading && !functions.data ? (
        <Loading />
      ) : functions.data?.length === 0 ? (
        <Empty>
          <p>
            No functions registered{env ? ` in ${env}` : ''}. Serve some with{' '}
            <code>npm start -- --functions ./functions.ts</code> (see the README's Functions section).
          </p>
        </Empty>
      ) : (
        functions.data && (
          <div class="table-wrap">
            <table id="functions" class="list">
              <thead>
                <tr>
                  <th scope="col">Function</th>
                  <th scope="col">Env</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Retries</th>
                  <th scope="col">Timeout</th>
                  <th scope="col">Success (recent)</th>
                  <th scope="col">Registered</th>
                </tr>
              </thead>
              <tbody>
                {functions.data.map((f: any) => (
                  <tr key={`${f.env}/${f.id}`}>
                    <td class="name">
                      <a href={`#/runs${query({ function: `${f.app_id}-${f.function_id}` })}`}>
                        {f.name ?? f.function_id}
                      </a>
                      <div class="muted mono">
                        {f.app_id}-{f.function_id}
                      </div>
                    </td>
                    <td>{f.env}</td>
                    <td>
                      <a href={`#/events${query({ name: f.trigger.event })}`}>
                        <code>{f.trigger.event}</code>
                      </a>
                    </td>
                    <td>{f.retries}</td>
                    <td>{f.timeout_ms === null ? '5 min (default)' : duration(f.timeout_ms)}</td>
                    <td>
                      {f.rate.done === 0 ? (
                        <span class="muted">no finished runs</span>
                      ) : (
                        `${Math.round((100 * f.rate.completed) / f.rate.done)}% of ${f.rate.done} run${f.rate.done === 1 ? '' : 's'}`
                      )}
                    </td>
                    <td class="nowrap">{time(f.registered_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      )}
    </>
  )
}
