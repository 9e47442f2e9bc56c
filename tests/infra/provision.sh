#!/usr/bin/env bash
# Installs what the tests run against (DESIGN.md "Tests run against real things"):
# Debian's clickhouse-server, chromium and strace, a JRE + Maven, Apache Kafka's and ZooKeeper's jars
# from Maven Central, helm and toxiproxy built from the Go module proxy, ClickHouse 26.9 from PyPI's
# chdb-core, Apicurio Registry (a schema registry) from Maven Central, and the Inngest SDK apps (PyPI
# inngest in a venv, an inngestgo binary).
# Idempotent: when everything is there it only checks and exits.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Passed to kafka/pom.xml as -Dkafka.version; kept in step with KAFKA_VERSION in kafka.ts.
kafka_version="3.9.2"
kafka_libs="$here/.cache/kafka-$kafka_version/libs"

log() { printf 'provision: %s\n' "$*"; }

missing_packages=()
command -v clickhouse-server >/dev/null 2>&1 || command -v clickhouse >/dev/null 2>&1 \
  || missing_packages+=(clickhouse-server)
command -v chromium >/dev/null 2>&1 || missing_packages+=(chromium)
# A recommends of chromium's; without any font, screenshots of pages show no text.
dpkg -s fonts-liberation >/dev/null 2>&1 || missing_packages+=(fonts-liberation)
# npm start and the image run Sluice on jemalloc (scripts/start.sh); tests/ops/start-script.test.ts checks it.
dpkg -s libjemalloc2 >/dev/null 2>&1 || missing_packages+=(libjemalloc2)
command -v java >/dev/null 2>&1 || missing_packages+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || missing_packages+=(maven)
command -v unzip >/dev/null 2>&1 || missing_packages+=(unzip) # a Go toolchain zip, should helm need one
# tests/ops/durable-ack.test.ts proves acknowledgements durable from the server's system calls.
command -v strace >/dev/null 2>&1 || missing_packages+=(strace)
# ClickHouse 26.9 comes as a PyPI wheel, installed into a virtualenv (below).
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing_packages+=(python3-venv)

if ((${#missing_packages[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing ${missing_packages[*]} and not root: install them with apt-get and rerun" >&2
    exit 1
  fi
  log "apt-get install ${missing_packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # No recommends: chromium's pull in a desktop's worth of packages the tests never use.
  apt-get install -y -q --no-install-recommends "${missing_packages[@]}"
else
  log "clickhouse-server, chromium (+fonts), libjemalloc2, java, mvn, python3-venv, strace: present"
fi

if [[ -f "$kafka_libs/kafka_2.13-$kafka_version.jar" && -f "$kafka_libs/.complete" ]]; then
  log "kafka $kafka_version jars: present in $kafka_libs"
else
  log "kafka $kafka_version jars: fetching from Maven Central into $kafka_libs"
  rm -rf "$kafka_libs"
  mkdir -p "$kafka_libs"
  # -B: no colour codes in CI logs. A marker file makes an interrupted copy count as missing.
  mvn -q -B -Dstyle.color=never -f "$here/kafka/pom.xml" dependency:copy-dependencies \
    -Dkafka.version="$kafka_version" -DincludeScope=runtime -DoutputDirectory="$kafka_libs"
  touch "$kafka_libs/.complete"
fi

# ZooKeeper, the Keeper of the replicated ClickHouse cluster the cluster tests start
# (tests/infra/clickhouse-cluster.ts), from its Maven Central jars as Kafka's. Kept in step with
# ZOOKEEPER_VERSION in clickhouse-cluster.ts.
zookeeper_version="3.9.5"
zookeeper_libs="$here/.cache/zookeeper-$zookeeper_version/libs"
if [[ -f "$zookeeper_libs/zookeeper-$zookeeper_version.jar" && -f "$zookeeper_libs/.complete" ]]; then
  log "zookeeper $zookeeper_version jars: present in $zookeeper_libs"
else
  log "zookeeper $zookeeper_version jars: fetching from Maven Central into $zookeeper_libs"
  rm -rf "$zookeeper_libs"
  mkdir -p "$zookeeper_libs"
  mvn -q -B -Dstyle.color=never -f "$here/zookeeper/pom.xml" dependency:copy-dependencies \
    -Dzookeeper.version="$zookeeper_version" -DincludeScope=runtime -DoutputDirectory="$zookeeper_libs"
  touch "$zookeeper_libs/.complete"
fi

# helm renders and lints deploy/helm/sluice (tests/deploy/helm.test.ts). No helm package is
# reachable here, so it is built from the Go module proxy (~4 min the first time, then cached).
helm_version="v3.22.0"
helm_dir="$here/.cache/helm-$helm_version"
if [[ -x "$helm_dir/helm" ]]; then
  log "helm $helm_version: present in $helm_dir"
else
  # helm v3.22 needs Go 1.26 (Debian 12's golang-go is 1.19). A Go ≥ 1.21 on the machine fetches
  # the toolchain helm asks for by itself (GOTOOLCHAIN=auto); without one, the same toolchain
  # download is made here, from the Go module proxy.
  go_bin=""
  for candidate in "$(command -v go || true)" /usr/local/go/bin/go; do
    if [[ -x "$candidate" ]] && "$candidate" env GOVERSION | grep -qE '^go1\.(2[1-9]|[3-9][0-9])'; then go_bin="$candidate"; break; fi
  done
  if [[ -z "$go_bin" ]]; then
    go_toolchain="v0.0.1-go1.26.8.linux-amd64"
    log "Go $go_toolchain: fetching from the Go module proxy"
    rm -rf "$here/.cache/go-toolchain"
    mkdir -p "$here/.cache/go-toolchain"
    curl -fsSL -o "$here/.cache/go-toolchain/go.zip" "https://proxy.golang.org/golang.org/toolchain/@v/$go_toolchain.zip"
    unzip -q "$here/.cache/go-toolchain/go.zip" -d "$here/.cache/go-toolchain"
    go_bin="$here/.cache/go-toolchain/golang.org/toolchain@$go_toolchain/bin/go"
    chmod +x "$go_bin" "$(dirname "$go_bin")"/../pkg/tool/*/* 2>/dev/null || true
  fi
  log "helm $helm_version: building from the Go module proxy into $helm_dir"
  mkdir -p "$helm_dir"
  GOTOOLCHAIN=auto GOBIN="$helm_dir" GOFLAGS=-mod=mod "$go_bin" install "helm.sh/helm/v3/cmd/helm@$helm_version"
fi

# Toxiproxy (Shopify's TCP proxy with injectable faults) stands between Sluice processes and Kafka,
# ClickHouse and the schema registry in the fault runs (tests/faults, bench/faults). No package is
# reachable here, so it is built from the Go module proxy, as helm is. Kept in step with
# TOXIPROXY_VERSION in tests/infra/toxiproxy.ts.
toxiproxy_version="v2.12.0"
toxiproxy_dir="$here/.cache/toxiproxy-$toxiproxy_version"
if [[ -x "$toxiproxy_dir/server" ]]; then
  log "toxiproxy $toxiproxy_version: present in $toxiproxy_dir"
else
  log "toxiproxy $toxiproxy_version: building from the Go module proxy into $toxiproxy_dir"
  mkdir -p "$toxiproxy_dir"
  # Its own GOPATH under the cache: the module and build caches stay with the tests' other tools.
  GOTOOLCHAIN=auto GOPATH="$here/.cache/go-path" GOBIN="$toxiproxy_dir" GOFLAGS=-mod=mod \
    go install "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version"
fi

# ClickHouse 26.9 beside Debian's 18.16, so the store and docs/clickhouse.md are proven on a
# current release too (tests/infra/clickhouse-current.ts). No current clickhouse package is
# reachable here; PyPI's chdb-core wheel holds the whole clickhouse-local program. Kept in
# step with CHDB_CORE_VERSION in clickhouse-current.ts.
chdb_core_version="26.9.0"
chdb_venv="$here/.cache/chdb-core-$chdb_core_version"
if [[ -f "$chdb_venv/.complete" ]]; then
  log "chdb-core $chdb_core_version (ClickHouse 26.9): present in $chdb_venv"
else
  log "chdb-core $chdb_core_version (ClickHouse 26.9): installing from PyPI into $chdb_venv"
  rm -rf "$chdb_venv"
  python3 -m venv "$chdb_venv"
  "$chdb_venv/bin/pip" install -q --disable-pip-version-check "chdb-core==$chdb_core_version"
  # A marker file makes an interrupted install count as missing.
  touch "$chdb_venv/.complete"
fi

# Apicurio Registry, a Confluent-compatible schema registry for the Avro tests
# (tests/infra/registry.ts): Maven Central serves the app as a ready-to-run Quarkus tarball. It
# needs Java 21+: the machine image's Temurin JDK in /usr/lib/jvm (registry.ts finds it). Kept in
# step with APICURIO_VERSION in registry.ts.
apicurio_version="3.3.3"
apicurio_dir="$here/.cache/apicurio-registry-$apicurio_version"
if [[ -f "$apicurio_dir/quarkus-run.jar" && -f "$apicurio_dir/.complete" ]]; then
  log "apicurio registry $apicurio_version: present in $apicurio_dir"
else
  log "apicurio registry $apicurio_version: fetching from Maven Central into $apicurio_dir"
  rm -rf "$apicurio_dir"
  mkdir -p "$apicurio_dir"
  # Run outside the repository, so Maven looks at no project's pom; the tarball stays in ~/.m2 too.
  (cd "$apicurio_dir" && mvn -q -B -Dstyle.color=never dependency:copy \
    -Dartifact="io.apicurio:apicurio-registry-app:$apicurio_version:tar.gz:all" -DoutputDirectory="$apicurio_dir")
  tarball="$apicurio_dir/apicurio-registry-app-$apicurio_version-all.tar.gz"
  tar -xzf "$tarball" -C "$apicurio_dir" --no-same-owner
  rm -f "$tarball"
  # A marker file makes an interrupted fetch or unpack count as missing.
  touch "$apicurio_dir/.complete"
fi
java21=""
for release in /usr/lib/jvm/*/release; do
  if grep -qE '^JAVA_VERSION="(2[1-9]|[3-9][0-9])' "$release" 2>/dev/null; then java21="${release%/release}"; fi
done
if [[ -n "$java21" ]]; then
  log "java 21+ for the schema registry: $java21"
else
  log "warning: no Java 21+ JDK in /usr/lib/jvm: the schema registry will not start (set JAVA_HOME to one)" >&2
fi

# The apps written with Inngest's official SDKs that Sluice runs unchanged (tests/sdk/apps, issue 49): PyPI
# inngest + Flask in a Python 3.11 virtualenv, and the inngestgo app built into a binary. npm `inngest` 4.x and
# 3.x (as inngest-v3) are dev dependencies. Measured on this machine: the venv 5–20 s (PyPI), the Go module download
# ~8 s and the first build ~75 s (2 shared cores); a rerun with both present checks and takes under 1 s.
# Kept in step with tests/helpers/sdk-app.ts.
sdk_python_dir="$here/.cache/sdk-python-inngest-0.5.19"
if [[ -f "$sdk_python_dir/.complete" ]]; then
  log "python inngest 0.5.19 + flask 3.1.3: present in $sdk_python_dir"
else
  python311="$(command -v python3.11 || true)"
  if [[ -z "$python311" ]]; then
    log "python3.11 is missing: the Python SDK app needs it (inngest 0.5 supports 3.10+)" >&2
    exit 1
  fi
  log "python inngest 0.5.19 + flask 3.1.3: installing from PyPI into $sdk_python_dir"
  rm -rf "$sdk_python_dir"
  "$python311" -m venv "$sdk_python_dir"
  "$sdk_python_dir/bin/pip" install -q --disable-pip-version-check "inngest==0.5.19" "flask==3.1.3"
  touch "$sdk_python_dir/.complete"
fi
sdk_go_app="$here/../sdk/apps/go"
sdk_go_cache="$here/.cache/go-sdk"
if [[ -x "$sdk_go_cache/sdk-go" && "$sdk_go_cache/sdk-go" -nt "$sdk_go_app/main.go" \
  && "$sdk_go_cache/sdk-go" -nt "$sdk_go_app/go.sum" ]]; then
  log "inngestgo v0.16.0 app: built in $sdk_go_cache/sdk-go"
else
  # inngestgo v0.16.0 needs Go 1.25; a Go >= 1.21 fetches that toolchain itself (GOTOOLCHAIN=auto).
  sdk_go_bin=""
  for candidate in "$(command -v go || true)" /usr/local/go/bin/go \
    "$here/.cache/go-toolchain/golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64/bin/go"; do
    if [[ -x "$candidate" ]] && "$candidate" env GOVERSION | grep -qE '^go1\.(2[1-9]|[3-9][0-9])'; then
      sdk_go_bin="$candidate"; break
    fi
  done
  if [[ -z "$sdk_go_bin" ]]; then
    log "no Go >= 1.21 (the helm step above fetches one): cannot build the inngestgo app" >&2
    exit 1
  fi
  log "inngestgo v0.16.0 app: building from the Go module proxy into $sdk_go_cache/sdk-go"
  mkdir -p "$sdk_go_cache"
  (cd "$sdk_go_app" && GOTOOLCHAIN=auto GOFLAGS=-mod=mod GOPATH="$sdk_go_cache/gopath" \
    GOMODCACHE="$sdk_go_cache/gopath/pkg/mod" GOCACHE="$sdk_go_cache/gocache" \
    "$sdk_go_bin" build -o "$sdk_go_cache/sdk-go" .)
  # The module sources are not needed once built (a rebuild fetches them again, ~8 s); they hold inngest's
  # own TypeScript UI, which the project's tools would otherwise find under tests/infra/.cache.
  GOMODCACHE="$sdk_go_cache/gopath/pkg/mod" "$sdk_go_bin" clean -modcache
fi

log "ready"
