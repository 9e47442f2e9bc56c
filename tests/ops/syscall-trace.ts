// Reads `strace -f -yy` output into system calls with the moment each was entered and left, and
// checks acknowledgements against it: an answer (or any effect seen from outside) may leave only
// after an fdatasync (or fsync) of the WAL file holding the write it acknowledges has returned.
// Order is the line order of strace's output, not its clock: strace prints a call whole when no
// other thread's event came between its entry and its exit, else as `<unfinished ...>` and
// `<... name resumed>`, so a line's place is a point in time common to every thread.

export interface Syscall {
  pid: number
  name: string
  /** The first argument's descriptor as `-y`/`-yy` name it: a path, or `TCP:[local->remote]`. */
  fd: string
  /** Everything between the parentheses, strings as strace escaped them. */
  args: string
  result: string
  /** Line numbers of the call's entry and of its return. */
  entry: number
  exit: number
}

const LINE = /^(\d+) +(?:[\d:.]+ )?(.*)$/
const CALL = /^(\w+)\((.*)$/
const RESUMED = /^<\.\.\. (\w+) resumed>(.*)$/
const UNFINISHED = ' <unfinished ...>'
const FD = /^\d+<(TCP:\[[^\]]*\]|[^>]*)>/

export function parseTrace(text: string): Syscall[] {
  const calls: Syscall[] = []
  const open = new Map<number, { name: string; args: string; entry: number }>()
  const lines = text.split('\n')
  const add = (pid: number, name: string, whole: string, entry: number, exit: number) => {
    // `args) = result`: the last ") = " ends the arguments (a string argument may hold one).
    const at = whole.lastIndexOf(') = ')
    const args = at >= 0 ? whole.slice(0, at) : whole
    const fd = (FD.exec(args)?.[1] ?? '').replace(/ \(deleted\)$/, '')
    calls.push({ pid, name, fd, args, result: at >= 0 ? whole.slice(at + 4) : '', entry, exit })
  }
  lines.forEach((line, i) => {
    const m = LINE.exec(line)
    if (!m) return
    const pid = Number(m[1])
    const rest = m[2]
    const resumed = RESUMED.exec(rest)
    if (resumed) {
      const started = open.get(pid)
      open.delete(pid)
      if (started) add(pid, started.name, started.args + resumed[2], started.entry, i)
      return
    }
    const call = CALL.exec(rest)
    if (!call) return // signals, exits
    if (rest.endsWith(UNFINISHED))
      open.set(pid, { name: call[1], args: call[2].slice(0, -UNFINISHED.length), entry: i })
    else add(pid, call[1], call[2], i, i)
  })
  return calls
}

const WRITES = new Set(['write', 'writev', 'pwrite64', 'sendto', 'sendmsg'])
const SYNCS = new Set(['fdatasync', 'fsync'])
const isWal = (fd: string) => /\/\d+\.log$/.test(fd)

/** An acknowledgement: the marker its write carries, and the call that tells the outside it is done. */
export interface Ack {
  label: string
  marker: string
  answer: (call: Syscall) => boolean
}

/**
 * Why each acknowledgement is not proven durable before it left (empty when all are), and for each
 * one that is, the line of the first sync that covers it.
 */
export function checkAcks(calls: Syscall[], acks: Ack[]): { problems: string[]; syncedAt: Map<string, number> } {
  const problems: string[] = []
  const syncedAt = new Map<string, number>()
  for (const ack of acks) {
    // The first WAL write holding the marker is the one acknowledged: later ones are stages after it.
    const write = calls.find((c) => WRITES.has(c.name) && isWal(c.fd) && c.args.includes(ack.marker))
    if (!write) {
      problems.push(`${ack.label}: no WAL write holds ${ack.marker}`)
      continue
    }
    const answer = calls.find((c) => WRITES.has(c.name) && ack.answer(c))
    if (!answer) {
      problems.push(`${ack.label}: no answer found`)
      continue
    }
    if (answer.entry < write.exit) {
      problems.push(`${ack.label}: answered (line ${answer.entry + 1}) before its WAL write returned`)
      continue
    }
    const synced = calls.find(
      (c) =>
        SYNCS.has(c.name) &&
        c.fd === write.fd &&
        c.result.startsWith('0') &&
        c.entry > write.exit &&
        c.exit < answer.entry,
    )
    const where = `WAL write at line ${write.entry + 1} (${write.fd}), answered at line ${answer.entry + 1}`
    if (synced) syncedAt.set(ack.label, synced.entry)
    else problems.push(`${ack.label}: ${where}: unsynced`)
  }
  return { problems, syncedAt }
}

/** A write on the TCP connection whose other end is `port` on loopback, starting with `prefix`. */
export const onConnection =
  (port: number, prefix: string) =>
  (call: Syscall): boolean =>
    call.fd.startsWith('TCP:[') && call.fd.endsWith(`->127.0.0.1:${port}]`) && call.args.includes(`"${prefix}`)
