package katalog

// The built-in profiles, by class and name, exactly as upstream defines them
// (iAlexeze/orkestra pkg/profiles: resource.go, probe.go, security.go,
// rolling_update.go, pdb.go, hpa.go, networkpolicy.go, resourcequota.go,
// reconciler.go). Each is the fields the profile stands for, written as the
// katalog would write them. LimitRanges, container and pod security of a
// user's own have no built-ins beyond these.

type builtins map[string]map[string]any

func requestsLimits(reqCPU, reqMem, limCPU, limMem string) map[string]any {
	return map[string]any{
		"requests": map[string]any{"cpu": reqCPU, "memory": reqMem},
		"limits":   map[string]any{"cpu": limCPU, "memory": limMem},
	}
}

var builtinResources = builtins{
	"tiny":          requestsLimits("25m", "64Mi", "100m", "128Mi"),
	"small":         requestsLimits("100m", "128Mi", "500m", "512Mi"),
	"medium":        requestsLimits("250m", "256Mi", "1", "1Gi"),
	"large":         requestsLimits("500m", "512Mi", "2", "2Gi"),
	"burst":         requestsLimits("200m", "256Mi", "2", "2Gi"),
	"steady":        requestsLimits("300m", "256Mi", "600m", "512Mi"),
	"compute-heavy": requestsLimits("1", "512Mi", "2", "1Gi"),
	"memory-heavy":  requestsLimits("250m", "1Gi", "500m", "2Gi"),
}

func probeTimings(initialDelay, period, failure, timeout int64) map[string]any {
	return map[string]any{
		"initialDelaySeconds": initialDelay,
		"periodSeconds":       period,
		"failureThreshold":    failure,
		"successThreshold":    int64(1),
		"timeoutSeconds":      timeout,
	}
}

// defaultProbeProfile is the timing of a probe that names no profile and
// sets no timing (upstream's DefaultProbeTimings).
const defaultProbeProfile = "standard"

var builtinProbes = builtins{
	"fast":       probeTimings(5, 10, 2, 5),
	"standard":   probeTimings(15, 20, 3, 10),
	"patient":    probeTimings(30, 30, 5, 10),
	"slow-start": probeTimings(0, 10, 30, 10),
}

func drop(caps ...any) map[string]any { return map[string]any{"drop": caps} }

var builtinContainerSecurity = builtins{
	"baseline": {"allowPrivilegeEscalation": false, "capabilities": drop("NET_RAW")},
	"restricted": {"allowPrivilegeEscalation": false, "runAsNonRoot": true,
		"capabilities": drop("ALL")},
	"hardened": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true,
		"capabilities": drop("ALL")},
}

var builtinPodSecurity = builtins{
	"baseline":   {"runAsNonRoot": false},
	"restricted": {"runAsNonRoot": true, "runAsUser": int64(1000)},
	"hardened":   {"runAsNonRoot": true, "runAsUser": int64(65534), "runAsGroup": int64(65534), "fsGroup": int64(65534)},
}

var builtinRollingUpdate = builtins{
	"safe":       {"maxSurge": "1", "maxUnavailable": "0"},
	"fast":       {"maxSurge": "25%", "maxUnavailable": "25%"},
	"blue-green": {"maxSurge": "100%", "maxUnavailable": "0"},
}

var builtinPDB = builtins{
	"zero-downtime": {"minAvailable": "100%"},
	"rolling":       {"maxUnavailable": "1"},
	"relaxed":       {"maxUnavailable": "25%"},
}

func policy(typ string, value, period int64) map[string]any {
	return map[string]any{"type": typ, "value": value, "periodSeconds": period}
}

func scaling(window int64, selectPolicy string, policies ...any) map[string]any {
	return map[string]any{"stabilizationWindowSeconds": window, "selectPolicy": selectPolicy, "policies": policies}
}

func hpaProfile(cpu int64, up, down map[string]any) map[string]any {
	return map[string]any{
		"targetCPUUtilizationPercentage": cpu,
		"behavior":                       map[string]any{"scaleUp": up, "scaleDown": down},
	}
}

var builtinHPA = builtins{
	"web": hpaProfile(70,
		scaling(0, "Max", policy("Percent", 100, 15), policy("Pods", 4, 15)),
		scaling(300, "Min", policy("Percent", 10, 60))),
	"api": hpaProfile(60,
		scaling(0, "Max", policy("Percent", 100, 15), policy("Pods", 4, 15)),
		scaling(600, "Min", policy("Percent", 5, 60))),
	"latency-sensitive": hpaProfile(50,
		scaling(0, "Max", policy("Percent", 200, 15), policy("Pods", 10, 15)),
		scaling(900, "Min", policy("Percent", 5, 120))),
	"batch": hpaProfile(80,
		scaling(30, "Max", policy("Percent", 100, 60)),
		scaling(120, "Min", policy("Percent", 50, 60))),
	"cost-optimized": hpaProfile(80,
		scaling(180, "Min", policy("Percent", 25, 60)),
		scaling(60, "Max", policy("Percent", 50, 60))),
}

var builtinNetworkPolicies = builtins{
	"deny-all":         {"ingress": []any{}, "egress": []any{}, "policyTypes": []any{"Ingress", "Egress"}},
	"deny-all-ingress": {"ingress": []any{}, "policyTypes": []any{"Ingress"}},
	"deny-all-egress":  {"egress": []any{}, "policyTypes": []any{"Egress"}},
	"allow-same-namespace": {"ingress": []any{map[string]any{"from": []any{map[string]any{"podSelector": map[string]any{}}}}},
		"policyTypes": []any{"Ingress"}},
	"allow-dns-egress": {"egress": []any{map[string]any{"ports": []any{
		map[string]any{"protocol": "UDP", "port": "53"},
		map[string]any{"protocol": "TCP", "port": "53"},
	}}}, "policyTypes": []any{"Egress"}},
}

func quota(pods, cpu, memory, reqCPU, reqMem, limCPU, limMem string) map[string]any {
	return map[string]any{"hard": map[string]any{
		"pods": pods, "cpu": cpu, "memory": memory,
		"requests.cpu": reqCPU, "requests.memory": reqMem,
		"limits.cpu": limCPU, "limits.memory": limMem,
	}}
}

var builtinResourceQuotas = builtins{
	"small":  quota("10", "2", "4Gi", "1", "2Gi", "2", "4Gi"),
	"medium": quota("20", "4", "8Gi", "2", "4Gi", "4", "8Gi"),
	"large":  quota("50", "8", "16Gi", "4", "8Gi", "8", "16Gi"),
	"xlarge": quota("100", "16", "32Gi", "8", "16Gi", "16", "32Gi"),
}

var builtinReconciler = builtins{
	"high-throughput": {"workers": int64(10), "resync": "5m", "queue": map[string]any{"maxDepth": int64(1000)}},
	"conservative":    {"workers": int64(2), "resync": "1m", "queue": map[string]any{"maxDepth": int64(100)}},
	"development":     {"workers": int64(1), "resync": "30s", "queue": map[string]any{"maxDepth": int64(50)}},
}
