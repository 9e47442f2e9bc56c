// REST: a backup of an embedded server's data dir (docs/operations.md, "Backups and upgrades").
// `POST /v1/backups {to}` copies one point in time of the whole database (a RocksDB snapshot: ingest
// and runs go on meanwhile) into a new directory on the server's disk, and answers once it is
// complete. `sluice restore` puts one back into a stopped server's data dir. A distributed role keeps
// nothing that its Kafka changelogs and ClickHouse do not already hold: there, 409 BACKUP_UNSUPPORTED.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { errors, Time } from './schemas.ts'

export interface BackupInfo {
  path: string
  dataFormat: number
  keys: number
  bytes: number
  createdAt: number
  durationMs: number
}

/** Writes a backup at `to`: the embedded server's (server/backup.ts); undefined in distributed mode. */
export type MakeBackup = (to: string) => Promise<BackupInfo>

const BackupBody = Type.Object(
  {
    to: Type.String({
      minLength: 1,
      description: "An absolute path on the server's disk that does not exist yet; the backup is made there",
      examples: ['/var/backups/sluice/2026-12-08'],
    }),
  },
  { additionalProperties: false },
)
const Backup = Type.Object({
  path: Type.String(),
  data_format: Type.Integer({ description: 'The data format of the copy (docs/operations.md)' }),
  keys: Type.Integer({ description: 'Entries copied' }),
  bytes: Type.Integer({ description: 'Their keys and values, uncompressed' }),
  created_at: Time('The point in time the backup holds'),
  duration_ms: Type.Integer(),
})

export function backupRoutes(deps: { backup?: MakeBackup }) {
  return async (app: FastifyInstance) => {
    app.post<{ Body: Static<typeof BackupBody> }>(
      '/v1/backups',
      {
        schema: {
          permission: 'backups:admin',
          tags: ['Operations'],
          summary: "Back up an embedded server's data dir to a new directory on its disk",
          body: BackupBody,
          response: { 201: Type.Object({ data: Backup }), ...errors(400, 401, 409) },
        },
      },
      async (request, reply) => {
        if (!deps.backup)
          throw new SluiceError(
            'BACKUP_UNSUPPORTED',
            'this server runs in distributed mode: its state is in Kafka and ClickHouse, back those up instead',
          )
        const made = await deps.backup(request.body.to)
        reply.code(201)
        return {
          data: {
            path: made.path,
            data_format: made.dataFormat,
            keys: made.keys,
            bytes: made.bytes,
            created_at: new Date(made.createdAt).toISOString(),
            duration_ms: made.durationMs,
          },
        }
      },
    )
  }
}
