// Provider-shaped webhook payloads, written for these tests after each provider's documented
// format (field names, nesting, units), with made-up values.

export const clerkUserCreated = {
  data: {
    id: 'user_29w83sxmDNGwOuEthce5gg56FcC',
    object: 'user',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email_addresses: [
      {
        id: 'idn_29w83yL7CwVlJXylYLxcslromF1',
        email_address: 'ada@example.com',
        verification: { status: 'verified', strategy: 'ticket' },
      },
    ],
    primary_email_address_id: 'idn_29w83yL7CwVlJXylYLxcslromF1',
    created_at: 1654012591514,
    updated_at: 1654012591835,
  },
  instance_id: 'ins_2h8Sb9hRW3a4LFGLkSxnpcbnzCv',
  object: 'event',
  timestamp: 1654012591835,
  type: 'user.created',
}

export const clerkHeaders = {
  'svix-id': 'msg_2h8SbAT7ct3EL6qGCdcF7KnmEnB',
  'svix-timestamp': '1654012591',
  'svix-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}

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
      lines: {
        object: 'list',
        data: [{ id: 'il_1PqVwzLkdIwHu7ix', amount: 2000, description: '1 × Pro (at $20.00 / month)' }],
        has_more: false,
      },
    },
  },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type: 'invoice.paid',
}

export const githubPullRequestOpened = {
  action: 'opened',
  number: 42,
  pull_request: {
    id: 1854327951,
    number: 42,
    state: 'open',
    title: 'Transforms for webhooks',
    user: { login: 'octocat', id: 583231, type: 'User' },
    head: { ref: 'feature/webhooks', sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e' },
    base: { ref: 'main', sha: '9049f1265b7d61be4a8904a9a27120d2064dab3b' },
    created_at: '2024-05-01T09:30:00Z',
  },
  repository: {
    id: 1296269,
    name: 'sluice',
    full_name: 'acme/sluice',
    private: false,
    owner: { login: 'acme', id: 9919 },
  },
  sender: { login: 'octocat', id: 583231, type: 'User' },
}

export const githubHeaders = {
  'X-GitHub-Event': 'pull_request',
  'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  'X-GitHub-Hook-ID': '292430182',
  'User-Agent': 'GitHub-Hookshot/044aadd',
}

export const shopifyOrderCreate = {
  id: 5467203666068,
  admin_graphql_api_id: 'gid://shopify/Order/5467203666068',
  email: 'jon@example.com',
  created_at: '2024-05-01T12:00:00-04:00',
  currency: 'USD',
  total_price: '403.00',
  financial_status: 'paid',
  line_items: [{ id: 13904135241876, title: 'IPod Nano - 8GB', quantity: 1, price: '199.00', sku: 'IPOD2008PINK' }],
  customer: { id: 7020593397908, email: 'john@example.com', first_name: 'John', last_name: 'Smith' },
}

export const shopifyHeaders = {
  'X-Shopify-Topic': 'orders/create',
  'X-Shopify-Shop-Domain': 'acme.myshopify.com',
  'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
  'X-Shopify-API-Version': '2024-04',
}

/** Linear's shape: the entity `type` and what happened to it, `action`. */
export const linearIssueCreate = {
  action: 'create',
  type: 'Issue',
  createdAt: '2024-05-01T10:20:30.000Z',
  data: {
    id: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9',
    identifier: 'ENG-123',
    title: 'Replay dead letters in bulk',
    priority: 2,
    teamId: '72b2a2dc-6f4f-4423-9d34-24b5bd10634a',
  },
  url: 'https://linear.app/acme/issue/ENG-123',
  organizationId: 'b2a3d0b5-0a8a-4f0e-9b7e-1c0a7f1b8a9d',
  webhookTimestamp: 1714558830000,
}
