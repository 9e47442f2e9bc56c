{{- define "sluice.fullname" -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- define "sluice.secretName" -}}{{ .Values.existingSecret | default (include "sluice.fullname" .) }}{{- end -}}
