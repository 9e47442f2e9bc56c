// The environment names every part knows: the one always there, and the name of the branch group.

/** The environment that always exists; keys and webhooks of `sluice dev` write to it. */
export const PRODUCTION = 'production'

/** The name a key, webhook or schema uses to belong to the branch group rather than one environment. */
export const BRANCH_GROUP = 'branch'
