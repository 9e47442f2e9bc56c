// Provider-shaped webhook requests for the sandbox tests and bench, written for them after
// each provider's documented format (field names, nesting, units), with made-up values.
// Bodies are sent pretty-printed where the provider does, so `raw` differs from JSON.stringify(body).
import type { TransformInput } from '../../transformer/sandbox-types.ts'

const sha = (seed: string) =>
  Array.from({ length: 40 }, (_, i) => '0123456789abcdef'[(seed.charCodeAt(i % seed.length) * (i + 7)) % 16]).join('')

const user = (login: string, id: number) => ({
  login,
  id,
  node_id: `MDQ6VXNlcj${id}`,
  avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
  gravatar_id: '',
  url: `https://api.github.com/users/${login}`,
  html_url: `https://github.com/${login}`,
  type: 'User',
  site_admin: false,
})

const repository = () => {
  const api = 'https://api.github.com/repos/acme/sluice'
  const links = Object.fromEntries(
    [
      'forks',
      'keys',
      'collaborators',
      'teams',
      'hooks',
      'issue_events',
      'events',
      'assignees',
      'branches',
      'tags',
      'blobs',
      'git_tags',
      'git_refs',
      'trees',
      'statuses',
      'languages',
      'stargazers',
      'contributors',
      'subscribers',
      'subscription',
      'commits',
      'git_commits',
      'comments',
      'issue_comment',
      'contents',
      'compare',
      'merges',
      'archive',
      'downloads',
      'issues',
      'pulls',
      'milestones',
      'notifications',
      'labels',
      'releases',
      'deployments',
    ].map((k) => [`${k}_url`, `${api}/${k}{/id}`]),
  )
  return {
    id: 1296269,
    node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
    name: 'sluice',
    full_name: 'acme/sluice',
    private: false,
    owner: user('acme', 9919),
    html_url: 'https://github.com/acme/sluice',
    description: 'Event ingestion and webhook consumption',
    fork: false,
    url: api,
    ...links,
    created_at: 1651234567,
    updated_at: '2024-05-01T09:00:00Z',
    pushed_at: 1714554000,
    git_url: 'git://github.com/acme/sluice.git',
    ssh_url: 'git@github.com:acme/sluice.git',
    clone_url: 'https://github.com/acme/sluice.git',
    homepage: null,
    size: 2048,
    stargazers_count: 321,
    watchers_count: 321,
    language: 'TypeScript',
    has_issues: true,
    forks_count: 12,
    open_issues_count: 7,
    default_branch: 'main',
    topics: ['events', 'webhooks', 'kafka'],
    visibility: 'public',
  }
}

const commit = (n: number) => ({
  id: sha(`c${n}`),
  tree_id: sha(`t${n}`),
  distinct: true,
  message: `Batch transforms per isolate (${n})\n\nOne thread hop for many calls.`,
  timestamp: `2024-05-01T09:2${n}:00+02:00`,
  url: `https://github.com/acme/sluice/commit/${sha(`c${n}`)}`,
  author: { name: 'Ada Lovelace', email: 'ada@example.com', username: 'ada' },
  committer: { name: 'Ada Lovelace', email: 'ada@example.com', username: 'ada' },
  added: [`transformer/sandbox-${n}.ts`],
  removed: [],
  modified: ['transformer/index.ts', 'tests/transformer/hostile.test.ts'],
})

/** A push of three commits: ~7 KB of JSON, the size GitHub sends for a typical push. */
export const githubPush = {
  ref: 'refs/heads/main',
  before: sha('before'),
  after: sha('c3'),
  repository: repository(),
  pusher: { name: 'ada', email: 'ada@example.com' },
  sender: user('ada', 583231),
  created: false,
  deleted: false,
  forced: false,
  base_ref: null,
  compare: 'https://github.com/acme/sluice/compare/1a2b3c...4d5e6f',
  commits: [commit(1), commit(2), commit(3)],
  head_commit: commit(3),
}

export const githubPullRequest = {
  action: 'opened',
  number: 42,
  pull_request: {
    id: 1854327951,
    number: 42,
    state: 'open',
    title: 'Sandbox for transforms',
    user: user('octocat', 583232),
    head: { ref: 'feature/sandbox', sha: sha('head') },
    base: { ref: 'main', sha: sha('base') },
  },
  repository: { id: 1296269, full_name: 'acme/sluice' },
  sender: user('octocat', 583232),
}

export const githubHeaders = (event: string, delivery: string) => ({
  'Content-Type': 'application/json',
  'User-Agent': 'GitHub-Hookshot/044aadd',
  'X-Github-Event': event,
  'X-Github-Delivery': delivery,
  'X-Github-Hook-Id': '292430182',
})

export const stripeInvoicePaid = {
  id: 'evt_1PqVx2LkdIwHu7ixG5nQ1aBc',
  object: 'event',
  api_version: '2024-06-20',
  created: 1724668530,
  data: {
    object: {
      id: 'in_1PqVwzLkdIwHu7ixQ3JtYcXy',
      object: 'invoice',
      amount_paid: 2000,
      currency: 'usd',
      customer: 'cus_QhvJ9n3q3Zm0wF',
      status: 'paid',
    },
  },
  livemode: false,
  pending_webhooks: 1,
  type: 'invoice.paid',
}

export const shopifyOrder = {
  id: 5467203666068,
  email: 'jon@example.com',
  created_at: '2024-05-01T12:00:00-04:00',
  currency: 'USD',
  total_price: '403.00',
  financial_status: 'paid',
  line_items: [{ id: 13904135241876, title: 'IPod Nano - 8GB', quantity: 1, price: '199.00', sku: 'IPOD2008PINK' }],
}

export const clerkUserCreated = {
  type: 'user.created',
  object: 'event',
  timestamp: 1654012591835,
  instance_id: 'ins_2h8Sb9hRW3a4LFGLkSxnpcbnzCv',
  data: {
    id: 'user_29w83sxmDNGwOuEthce5gg56FcC',
    object: 'user',
    first_name: 'Ada',
    email_addresses: [{ email_address: 'ada@example.com' }],
    created_at: 1654012591514,
  },
}

/** A request as ingest captures it: `raw` is the body exactly as sent (here pretty-printed when `pretty`). */
export function request(
  body: unknown,
  headers: Record<string, string> = {},
  query: Record<string, string[]> = {},
  pretty = false,
): TransformInput {
  return { body, headers, query, raw: pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body) }
}

/** The limits the transformer passes by default. */
export const LIMITS = { cpuTimeMs: 100, wallTimeMs: 1000, isolateMemoryMb: 32, maxOutputBytes: 1024 * 1024 }

/**
 * The same with CPU to spare. The CPU limit is wall time of the isolate thread (see sandbox.ts),
 * and hitting the memory limit alone costs V8 20-40 ms of last-resort GCs, so on a loaded
 * machine a memory bomb may be stopped by the CPU limit first. Tests about another limit use
 * these, so that the limit they are about is what stops them, every time.
 */
export const ROOMY_LIMITS = { ...LIMITS, cpuTimeMs: 5000, wallTimeMs: 10000 }
