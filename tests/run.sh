#!/usr/bin/env bash
# `npm test`: every test, against real Kafka, ClickHouse and Chromium, provisioned when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node24.sh
echo "node $(node --version)"
bash tests/infra/provision.sh
npx tsc --noEmit
npx madge --circular --extensions ts --ts-config tsconfig.json core bus ingest dedup transformer router runner store control api client cli
node tests/infra/up.ts
trap 'node tests/infra/down.ts' EXIT
npx tap "$@"
