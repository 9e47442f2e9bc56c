#!/usr/bin/env bash
# `npm start`: the embedded Dev Server on http://127.0.0.1:8288 (flags pass through).
set -euo pipefail
. "$(dirname "$0")/node24.sh"
exec node --no-node-snapshot --conditions=sluice-source "$(dirname "$0")/../bin/sluice.js" dev "$@"
