{{/* Chart name, or nameOverride, truncated to the 63 characters of a DNS label. */}}
{{- define "ferrvault-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name prefix: fullnameOverride, else the release name if it already contains the chart name, else release-chart. */}}
{{- define "ferrvault-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ferrvault-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "ferrvault-operator.labels" -}}
helm.sh/chart: {{ include "ferrvault-operator.chart" . }}
{{ include "ferrvault-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ include "ferrvault-operator.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ferrvault
{{- end }}

{{/* Labels selecting the operator pods; never change them between releases (Deployment selectors are immutable). */}}
{{- define "ferrvault-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ferrvault-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ferrvault-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ferrvault-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ferrvault-operator.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{/* The image reference: repository@digest when a digest is pinned, else repository:tag. */}}
{{- define "ferrvault-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (include "ferrvault-operator.imageTag" .) }}
{{- end }}
{{- end }}

{{/* The watched namespaces, comma-separated (watchNamespaces plus the Go chart's watchNamespace, each once); empty for the whole cluster. */}}
{{- define "ferrvault-operator.watchNamespaces" -}}
{{- $namespaces := .Values.watchNamespaces | default list }}
{{- with .Values.watchNamespace }}
{{- $namespaces = append $namespaces . }}
{{- end }}
{{- $namespaces | uniq | join "," }}
{{- end }}

{{/* Where the metrics serving certificate Secret is mounted. */}}
{{- define "ferrvault-operator.metricsCertDir" -}}
/etc/ferrvault/metrics-certs
{{- end }}

{{/*
Seconds in a Go-style duration ("90s", "2m", "1h30m", "500ms"), as a string for `float64`.
Fails rendering on anything else, naming the value, so a typo never reaches the operator.
Call with (list "valueName" "2m").
*/}}
{{- define "ferrvault-operator.durationSeconds" -}}
{{- $name := index . 0 }}
{{- $value := toString (index . 1) }}
{{- if not (regexMatch "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$" $value) }}
{{- fail (printf "%s: %q is not a duration such as 90s, 2m or 1h30m" $name $value) }}
{{- end }}
{{- $unit := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 }}
{{- $total := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h)" $value -1 }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" . }}
{{- $suffix := trimPrefix $number . }}
{{- $total = addf $total (mulf (float64 $number) (get $unit $suffix)) }}
{{- end }}
{{- $total }}
{{- end }}

{{/*
Render-time guards: settings the operator would refuse, or that break it in a cluster, fail `helm install` with a message.
*/}}
{{- define "ferrvault-operator.validate" -}}
{{- $timeout := include "ferrvault-operator.durationSeconds" (list "reconcileTimeout" .Values.reconcileTimeout) | float64 }}
{{- if lt $timeout 31.0 }}
{{- fail (printf "reconcileTimeout %s is below 31s, the longest one FerrVault API call can take with its retries; the operator would refuse to start" .Values.reconcileTimeout) }}
{{- end }}
{{- if and .Values.metrics.prometheusRule.enabled (le (float64 .Values.metrics.prometheusRule.stuckAfterSeconds) $timeout) }}
{{- fail (printf "metrics.prometheusRule.stuckAfterSeconds (%v) must exceed reconcileTimeout (%s = %vs): every healthy reconcile ends by its deadline" .Values.metrics.prometheusRule.stuckAfterSeconds .Values.reconcileTimeout $timeout) }}
{{- end }}
{{- $grace := include "ferrvault-operator.durationSeconds" (list "shutdownGracePeriod" .Values.shutdownGracePeriod) | float64 }}
{{- if le (float64 .Values.terminationGracePeriodSeconds) $grace }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed shutdownGracePeriod (%s): the kubelet would kill the pod before it released its Lease" .Values.terminationGracePeriodSeconds .Values.shutdownGracePeriod) }}
{{- end }}
{{- range $name := list "defaultRefreshInterval" "stallThreshold" "connectionProbeInterval" }}
{{- $_ := include "ferrvault-operator.durationSeconds" (list $name (get $.Values $name)) }}
{{- end }}
{{- if .Values.leaderElection.enabled }}
{{- $lease := include "ferrvault-operator.durationSeconds" (list "leaderElection.leaseDuration" .Values.leaderElection.leaseDuration) | float64 }}
{{- $renew := include "ferrvault-operator.durationSeconds" (list "leaderElection.renewDeadline" .Values.leaderElection.renewDeadline) | float64 }}
{{- $retry := include "ferrvault-operator.durationSeconds" (list "leaderElection.retryPeriod" .Values.leaderElection.retryPeriod) | float64 }}
{{- if not (and (gt $lease $renew) (gt $renew $retry)) }}
{{- fail "leaderElection: need leaseDuration > renewDeadline > retryPeriod, or two replicas could both lead" }}
{{- end }}
{{- if gt (addf $renew $retry) $lease }}
{{- fail "leaderElection: need renewDeadline + retryPeriod <= leaseDuration: a leader that cannot renew stops writing at renewDeadline, and that margin must pass before another replica may take the Lease" }}
{{- end }}
{{- else if gt (int .Values.replicaCount) 1 }}
{{- fail "replicaCount > 1 needs leaderElection.enabled: replicas without a Lease would all reconcile the same objects" }}
{{- else if gt (int .Values.shards) 1 }}
{{- fail "shards > 1 needs leaderElection.enabled: each shard is a Lease" }}
{{- end }}
{{- if .Values.oidc.enabled }}
{{- if not .Values.oidc.audience }}
{{- fail "oidc.enabled needs oidc.audience: the audience FerrVault expects in the projected ServiceAccount token" }}
{{- end }}
{{- if not .Values.oidc.clusterID }}
{{- fail "oidc.enabled needs oidc.clusterID: the cluster's ID registered in FerrVault (connections no longer set it)" }}
{{- end }}
{{- if not .Values.oidc.trustedURLs }}
{{- fail "oidc.enabled needs oidc.trustedURLs: the FerrVault base URLs the cluster identity may be sent to" }}
{{- end }}
{{- range .Values.oidc.trustedURLs }}
{{- if and (hasPrefix "http://" .) (not $.Values.ferrvault.allowInsecureHttp) }}
{{- fail (printf "oidc.trustedURLs: %s is plain http://; the cluster token would travel in clear (needs ferrvault.allowInsecureHttp)" .) }}
{{- end }}
{{- end }}
{{- end }}
{{- if .Values.networkPolicy.enabled }}
{{- if not .Values.networkPolicy.egress.apiServer.to }}
{{- fail "networkPolicy.enabled needs networkPolicy.egress.apiServer.to: the API server's addresses (kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes), or the operator cannot reach it" }}
{{- end }}
{{- if not (or .Values.networkPolicy.egress.ferrvault.to .Values.networkPolicy.egress.ferrvault.cidrs) }}
{{- fail "networkPolicy.enabled needs networkPolicy.egress.ferrvault.to or networkPolicy.egress.ferrvault.cidrs: where FerrVault is, or no connection can be probed or synced" }}
{{- end }}
{{- end }}
{{- if and .Values.admin.enabled (not (regexMatch "^.*:[0-9]+$" .Values.admin.bindAddress)) }}
{{- fail (printf "admin.bindAddress %q must be host:port (or :port)" .Values.admin.bindAddress) }}
{{- end }}
{{- end }}

{{/* Container port number of the admin endpoint, from admin.bindAddress. */}}
{{- define "ferrvault-operator.adminPort" -}}
{{- regexFind "[0-9]+$" .Values.admin.bindAddress }}
{{- end }}

{{/* Spread replicas across nodes and zones, best effort, counting only pods of the same ReplicaSet. */}}
{{- define "ferrvault-operator.defaultTopologySpread" -}}
{{- range list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
- maxSkew: 1
  topologyKey: {{ . }}
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "ferrvault-operator.selectorLabels" $ | nindent 6 }}
  matchLabelKeys:
    - pod-template-hash
{{- end }}
{{- end }}
