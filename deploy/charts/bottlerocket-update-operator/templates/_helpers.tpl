{{/*
Labels on every object of one component; the argument is the component's name.
*/}}
{{- define "brupop.labels" -}}
app.kubernetes.io/component: {{ . }}
app.kubernetes.io/managed-by: brupop
app.kubernetes.io/part-of: brupop
brupop.bottlerocket.aws/component: {{ . }}
{{- end }}

{{/*
Labels on a component's pods: the selector label plus the user's podLabels.
Argument: (dict "component" <name> "root" $).
*/}}
{{- define "brupop.podLabels" -}}
brupop.bottlerocket.aws/component: {{ .component }}
{{- with .root.Values.podLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Linux nodes of the architectures the image is built for; the argument is a list of extra
match expressions (the agent adds the opt-in label).
*/}}
{{- define "brupop.nodeAffinity" -}}
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - key: kubernetes.io/os
            operator: In
            values: [linux]
          - key: kubernetes.io/arch
            operator: In
            values: [amd64, arm64]
          {{- with . }}
          {{- toYaml . | nindent 10 }}
          {{- end }}
{{- end }}

{{/*
Pod-level settings shared by the three workloads: pull secrets and the service account.
Argument: (dict "serviceAccount" <name> "root" $).
*/}}
{{- define "brupop.podCommon" -}}
serviceAccountName: {{ .serviceAccount }}
{{- with .root.Values.image_pull_secrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Environment shared by the three processes.
Argument: (dict "tracingFilter" <the component's log filter> "root" $).
*/}}
{{- define "brupop.commonEnv" -}}
- name: BRUPOP_NAMESPACE
  value: {{ .root.Values.namespace | quote }}
- name: LOGGING_FORMATTER
  value: {{ .root.Values.logging.formatter | quote }}
- name: TRACING_FILTER_DIRECTIVE
  value: {{ .tracingFilter | quote }}
{{- end }}

{{/*
Container hardening for the controller and the apiserver: the image's non-root user, no
privileges, a read-only root file system.
*/}}
{{- define "brupop.restrictedSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
The controller's notification settings (docs/notifications.md): CLUSTER_NAME and, per webhook n
(from 1), NOTIFICATION_WEBHOOK_<n>_URL (a value, or from a Secret's key), _FORMAT and _EVENTS.
*/}}
{{- define "brupop.notificationEnv" -}}
{{- if .clusterName }}
- name: CLUSTER_NAME
  value: {{ .clusterName | quote }}
{{- end }}
{{- if gt (len .webhooks) 8 }}
{{- fail "notifications.webhooks: at most 8 webhooks" }}
{{- end }}
{{- range $index, $hook := .webhooks }}
{{- $n := add1 $index }}
- name: NOTIFICATION_WEBHOOK_{{ $n }}_URL
{{- if $hook.urlFromSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "notifications.webhooks[%d].urlFromSecret.name is required" $index) $hook.urlFromSecret.name | quote }}
      key: {{ required (printf "notifications.webhooks[%d].urlFromSecret.key is required" $index) $hook.urlFromSecret.key | quote }}
{{- else }}
  value: {{ required (printf "notifications.webhooks[%d]: set url or urlFromSecret" $index) $hook.url | quote }}
{{- end }}
- name: NOTIFICATION_WEBHOOK_{{ $n }}_FORMAT
  value: {{ $hook.format | default "json" | quote }}
- name: NOTIFICATION_WEBHOOK_{{ $n }}_EVENTS
  value: {{ join "," ($hook.events | default (list "all")) | quote }}
{{- end }}
{{- end }}

{{/*
The image of a component ("agent" or "control"): `image.<component>_repository`, tagged
`image.tag` or, when that is empty, the chart's appVersion (the package version). A string
`image` (the original chart's form) names one image for every component.
Argument: (dict "component" <agent|control> "root" $).
*/}}
{{- define "brupop.image" -}}
{{- $image := .root.Values.image -}}
{{- if kindIs "string" $image -}}
{{ $image }}
{{- else -}}
{{ index $image (printf "%s_repository" .component) }}:{{ $image.tag | default .root.Chart.AppVersion }}
{{- end -}}
{{- end }}
