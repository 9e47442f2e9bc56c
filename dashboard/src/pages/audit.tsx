// The audit log (admins): who changed what, from where, newest first, and who was refused.
import { api } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { DataTable } from '../ui/data-table.tsx'

type Entry = {
  id: string
  at: string
  actor: { kind: string; name?: string }
  action: string
  method: string
  route: string
  target: Record<string, string>
  status: number
  address: string
}

export function AuditPage() {
  const log = useApi(() => api<{ data: Entry[] }>('GET', '/v1/audit?limit=200'), [])
  return (
    <>
      <h1 tabIndex={-1}>Audit log</h1>
      <ErrorMessage error={log.error} />
      {log.loading && !log.data ? (
        <Loading />
      ) : log.data?.data.length === 0 ? (
        <Empty>
          <p>No change has been made through the REST API yet.</p>
        </Empty>
      ) : (
        log.data && (
          <DataTable<Entry>
            id="audit"
            caption="Audit log"
            rows={log.data.data}
            rowKey={(e) => e.id}
            columns={[
              { header: 'When', class: 'nowrap', cell: (e) => time(e.at) },
              { header: 'Who', cell: (e) => e.actor.name ?? e.actor.kind },
              { header: 'What', class: 'mono', cell: (e) => `${e.method} ${e.route}` },
              { header: 'Permission', cell: (e) => e.action },
              {
                header: 'Target',
                class: 'mono break',
                cell: (e) =>
                  Object.entries(e.target)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(' '),
              },
              { header: 'Result', cell: (e) => (e.status === 403 ? 'refused (403)' : String(e.status)) },
              { header: 'From', class: 'mono', cell: (e) => e.address },
            ]}
          />
        )
      )}
    </>
  )
}
