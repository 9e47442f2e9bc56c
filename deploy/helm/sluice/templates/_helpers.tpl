{{/* Names stay ≤ 63 characters with the longest role suffix ("-transformer"). */}}
{{- define "sluice.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sluice.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "sluice.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one role: (dict "root" $ "role" $role). */}}
{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "sluice.secretName" -}}
{{- .Values.existingSecret | default (include "sluice.fullname" .) -}}
{{- end -}}

{{- define "sluice.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "sluice.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* "true" when a role's process serves HTTP (ingest or api): an http port besides ops (probes, /metrics). */}}
{{- define "sluice.httpRole" -}}
{{- if and (not .functions) (or (has "ingest" .roles) (has "api" .roles)) -}}true{{- end -}}
{{- end -}}

{{/* Where the mounted Secrets are, one file per secret (the *_FILE settings). */}}
{{- define "sluice.secretsDir" -}}/etc/sluice/secrets{{- end -}}

{{/*
Settings the chart derives from its own values (ports the probes use, the data dir it mounts, the
roles of each Deployment, the grace period the pods' terminationGracePeriodSeconds follows): set
those values rather than their variables in env.
*/}}
{{- define "sluice.reservedEnv" -}}
{{- list "SLUICE_HOST" "SLUICE_PORT" "SLUICE_OPS_PORT" "SLUICE_DATA_DIR" "SLUICE_ROLES" "SLUICE_FUNCTIONS" "SLUICE_SHUTDOWN_GRACE_MS" | toJson -}}
{{- end -}}

{{/*
The environment of one role as a JSON object of name → value: the chart's own settings, then the
global env, then the role's env (the later wins). (dict "root" $ "name" $role "spec" $spec)
*/}}
{{- define "sluice.env" -}}
{{- $v := .root.Values -}}
{{- $dir := include "sluice.secretsDir" .root -}}
{{- $env := dict
  "SLUICE_HOST" $v.listenHost
  "SLUICE_PORT" $v.ports.http
  "SLUICE_OPS_PORT" $v.ports.ops
  "SLUICE_DATA_DIR" $v.dataDir
  "SLUICE_SIGNING_KEY_FILE" (printf "%s/signing-key" $dir)
  "SLUICE_LOG_LEVEL" $v.logLevel
  "SLUICE_KAFKA_BROKERS" (required "kafka.brokers is required" $v.kafka.brokers)
  "SLUICE_TOPIC_PREFIX" $v.kafka.topicPrefix
  "SLUICE_PARTITIONS" $v.kafka.partitions
  "SLUICE_CLICKHOUSE_URL" $v.clickhouse.url
  "SLUICE_CLICKHOUSE_DATABASE" $v.clickhouse.database
  "SLUICE_SHUTDOWN_GRACE_MS" $v.shutdown.graceMs
-}}
{{- if $v.trustProxy }}{{ $_ := set $env "SLUICE_TRUST_PROXY" $v.trustProxy }}{{ end -}}
{{- if include "sluice.httpRole" .spec }}{{ $_ := set $env "SLUICE_SHUTDOWN_DELAY_MS" $v.shutdown.httpDelayMs }}{{ end -}}
{{- with $v.kafka.tls -}}
{{- if .enabled }}{{ $_ := set $env "SLUICE_KAFKA_TLS" "true" }}{{ end -}}
{{- if .caSecret }}{{ $_ := set $env "SLUICE_KAFKA_CA_FILE" (printf "%s/kafka-ca.pem" $dir) }}{{ end -}}
{{- if .certSecret -}}
{{- $_ := set $env "SLUICE_KAFKA_CERT_FILE" (printf "%s/kafka-cert.pem" $dir) -}}
{{- $_ := set $env "SLUICE_KAFKA_KEY_FILE" (printf "%s/kafka-key.pem" $dir) -}}
{{- end -}}
{{- end -}}
{{- if $v.kafka.sasl.mechanism -}}
{{- $_ := set $env "SLUICE_KAFKA_SASL_MECHANISM" $v.kafka.sasl.mechanism -}}
{{- $_ := set $env "SLUICE_KAFKA_PASSWORD_FILE" (printf "%s/kafka-password" $dir) -}}
{{- end -}}
{{- if $v.clickhouse.existingSecret }}{{ $_ := set $env "SLUICE_CLICKHOUSE_PASSWORD_FILE" (printf "%s/clickhouse-password" $dir) }}{{ end -}}
{{- if $v.clickhouse.caSecret }}{{ $_ := set $env "SLUICE_CLICKHOUSE_CA_FILE" (printf "%s/clickhouse-ca.pem" $dir) }}{{ end -}}
{{- with $v.clickhouse.cluster -}}
{{- if .name }}{{ $_ := set $env "SLUICE_CLICKHOUSE_CLUSTER" .name }}{{ end -}}
{{- if .insertQuorum }}{{ $_ := set $env "SLUICE_CLICKHOUSE_INSERT_QUORUM" .insertQuorum }}{{ end -}}
{{- end -}}
{{- if $v.schemaRegistry.url }}{{ $_ := set $env "SLUICE_SCHEMA_REGISTRY_URL" $v.schemaRegistry.url }}{{ end -}}
{{- if $v.publicUrl }}{{ $_ := set $env "SLUICE_PUBLIC_URL" $v.publicUrl }}{{ end -}}
{{- with $v.sso -}}
{{- if .issuer -}}
{{- $_ := set $env "SLUICE_OIDC_ISSUER" .issuer -}}
{{- $_ := set $env "SLUICE_OIDC_CLIENT_ID" (required "sso.clientId is required with sso.issuer" .clientId) -}}
{{- $_ := set $env "SLUICE_OIDC_CLIENT_SECRET_FILE" (printf "%s/oidc-client-secret" $dir) -}}
{{- $_ := set $env "SLUICE_OIDC_ROLE_CLAIM" .roleClaim -}}
{{- $_ := required "publicUrl is required with sso.issuer: the provider sends browsers back to it" $v.publicUrl -}}
{{- end -}}
{{- end -}}
{{- if $v.schemaRegistry.existingSecret }}{{ $_ := set $env "SLUICE_SCHEMA_REGISTRY_PASSWORD_FILE" (printf "%s/schema-registry-password" $dir) }}{{ end -}}
{{- $reserved := include "sluice.reservedEnv" .root | fromJsonArray -}}
{{- range $source := list (dict "at" "env" "env" $v.env) (dict "at" (printf "roles.%s.env" $.name) "env" (.spec.env | default dict)) -}}
{{- range $name, $value := $source.env -}}
{{- if has $name $reserved -}}
{{- fail (printf "%s.%s: set by the chart (ports, dataDir, listenHost, roles, functions, shutdown.graceMs); set that value instead" $source.at $name) -}}
{{- end -}}
{{- $_ := set $env $name $value -}}
{{- end -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}

{{/* User names read from existing Secrets: [[variable, secret, key], …]. */}}
{{- define "sluice.secretEnv" -}}
{{- $v := .Values -}}
{{- $refs := list -}}
{{- if $v.kafka.sasl.mechanism -}}
{{- $refs = append $refs (list "SLUICE_KAFKA_USERNAME" (required "kafka.sasl.existingSecret: SASL needs a Secret with the user name and password" $v.kafka.sasl.existingSecret) $v.kafka.sasl.usernameKey) -}}
{{- end -}}
{{- if $v.clickhouse.existingSecret -}}
{{- $refs = append $refs (list "SLUICE_CLICKHOUSE_USER" $v.clickhouse.existingSecret $v.clickhouse.usernameKey) -}}
{{- end -}}
{{- if $v.schemaRegistry.existingSecret -}}
{{- $refs = append $refs (list "SLUICE_SCHEMA_REGISTRY_USER" $v.schemaRegistry.existingSecret $v.schemaRegistry.usernameKey) -}}
{{- end -}}
{{- toJson $refs -}}
{{- end -}}

{{/* The files of the secrets volume: [[secret, key, file, mode], …]. */}}
{{- define "sluice.secretFiles" -}}
{{- $v := .Values -}}
{{- $signingKey := ternary $v.existingSecretKey "SLUICE_SIGNING_KEY" (ne $v.existingSecret "") -}}
{{- $files := list (list (include "sluice.secretName" .) $signingKey "signing-key") -}}
{{- with $v.kafka.tls -}}
{{- if .caSecret }}{{ $files = append $files (list .caSecret .caKey "kafka-ca.pem") }}{{ end -}}
{{- if .certSecret -}}
{{- $files = append $files (list .certSecret .certKey "kafka-cert.pem") -}}
{{- $files = append $files (list .certSecret .keyKey "kafka-key.pem") -}}
{{- end -}}
{{- end -}}
{{- if $v.kafka.sasl.mechanism }}{{ $files = append $files (list $v.kafka.sasl.existingSecret $v.kafka.sasl.passwordKey "kafka-password") }}{{ end -}}
{{- if $v.clickhouse.existingSecret }}{{ $files = append $files (list $v.clickhouse.existingSecret $v.clickhouse.passwordKey "clickhouse-password") }}{{ end -}}
{{- if $v.clickhouse.caSecret }}{{ $files = append $files (list $v.clickhouse.caSecret $v.clickhouse.caKey "clickhouse-ca.pem") }}{{ end -}}
{{- if $v.schemaRegistry.existingSecret }}{{ $files = append $files (list $v.schemaRegistry.existingSecret $v.schemaRegistry.passwordKey "schema-registry-password") }}{{ end -}}
{{- if $v.sso.issuer }}{{ $files = append $files (list (required "sso.existingSecret: SSO needs a Secret with the client secret" $v.sso.existingSecret) $v.sso.clientSecretKey "oidc-client-secret") }}{{ end -}}
{{- toJson $files -}}
{{- end -}}
