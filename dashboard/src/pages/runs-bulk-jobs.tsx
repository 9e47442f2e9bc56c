// The recent bulk cancels and replays (GET /v1/runs/bulk), newest first, each with what it acts on and
// its progress: runs matched so far, acted on, skipped.
import { Badge } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { describeFilter } from './runs-filters.tsx'

const SHOWN = 5

/** What a job did to a run: cancelled, replayed or retried. */
export const jobVerb = (job: any) =>
  job.action === 'cancel' ? 'cancelled' : job.mode === 'retry' ? 'retried' : 'replayed'

const actionName = (job: any) =>
  job.action === 'cancel' ? 'cancel' : job.mode === 'retry' ? 'replay: retry failed runs' : 'replay: new runs'

// Progress in words rather than a column per count: on a phone the rows are cards, without headers.
const JOB_COLUMNS: Array<Column<any>> = [
  { header: 'Action', cell: (j) => actionName(j) },
  { header: 'Runs', class: 'name', cell: (j) => describeFilter(j.filter) },
  { header: 'Status', cell: (j) => <Badge status={j.status} /> },
  {
    header: 'Progress',
    cell: (j) => `${j.matched} matched, ${j.done} ${jobVerb(j)}, ${j.skipped} skipped`,
  },
  { header: 'Started', class: 'nowrap', cell: (j) => time(j.created_at) },
]

export function BulkJobs({ jobs }: { jobs: any[] }) {
  return (
    <>
      <h3>Recent bulk actions</h3>
      <DataTable
        id="bulk-jobs"
        caption="Recent bulk actions, newest first"
        cards
        rows={jobs.slice(0, SHOWN)}
        rowKey={(j) => j.id}
        rowId={(j) => j.id}
        columns={JOB_COLUMNS}
      />
    </>
  )
}
