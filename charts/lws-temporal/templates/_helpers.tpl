{{/*
The labels of an object: the project's name, the component when there is one, and Helm's own unless helmMetadata is
false. Call with (dict "root" $ "component" "worker"); an empty component leaves the label out.
*/}}
{{- define "lws-temporal.labels" -}}
app.kubernetes.io/name: lws-temporal
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- if .root.Values.helmMetadata }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}
{{- end }}

{{/*
The labels that select a component's pods. Fixed: a Deployment's selector cannot change, so these must stay the
same across chart versions and between the Helm and the kustomize install.
*/}}
{{- define "lws-temporal.selectorLabels" -}}
app.kubernetes.io/name: lws-temporal
app.kubernetes.io/component: {{ . }}
{{- end }}

{{/* The image of every process; the tag defaults to the chart's appVersion. */}}
{{- define "lws-temporal.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Where the pods of every Deployment may run, and how their image is pulled: the values shared by all three. */}}
{{- define "lws-temporal.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Whether the metrics Services are rendered: on their own, or for the ServiceMonitor. */}}
{{- define "lws-temporal.metricsServices" -}}
{{- if or .Values.metrics.services.enabled .Values.metrics.serviceMonitor.enabled }}true{{ end }}
{{- end }}
