package katalog

// Keys of the original (upstream) katalog format that this runtime does not
// implement. Each is reported where it stands: an error when dropping it would
// change what the operator does to the cluster or who may do what, with the
// alternative to use; a warning only when nothing observable changes.

// upstreamKey says how one unimplemented upstream key is reported.
type upstreamKey struct {
	// warn: dropping the key changes nothing observable, so loading goes on.
	warn bool
	// why says what the key does upstream and what to write instead.
	why string
}

const (
	placeholderKind = "upstream declares this kind in its hook blocks but never creates it; declare the object under custom: with its apiVersion and kind"
	outOfScopeGo    = "it runs compiled Go code, which this runtime does not load; express the logic as resources, conditions and CEL, or keep that operator on upstream Orkestra"
	outOfScopeHTTP  = "it makes HTTP calls to services outside the cluster, which this runtime does not do; have an in-cluster controller write the result into the custom resource and read it from there"
)

// upstreamKeys describes every upstream key the loader recognises but does
// not implement, by name. A key named in a level's unimplemented list but
// missing here is an error with a generic message.
var upstreamKeys = map[string]upstreamKey{
	// Documentation and tooling metadata: nothing reaches the cluster.
	"license":                  {warn: true, why: "documentation metadata"},
	"list":                     {why: "typed Go apiTypes (location, object, objectList, alias) build Go types into the operator, which this runtime does not do; remove them and keep group, version, kind and plural"},
	"controlCenter":            {warn: true, why: "the upstream UI's settings; this runtime has no control center (use /katalog and /metrics)"},
	"observability":            {warn: true, why: "upstream's telemetry settings; this runtime always serves /metrics"},
	"konfig":                   {warn: true, why: "upstream's runtime environment settings; use orkestra's command-line flags"},
	"policy":                   {warn: true, why: "upstream's registry import policy; this runtime imports local files only"},
	"crossAccess":              {why: "crossAccess is set per entry here: crossAccess: false on an entry makes cross reads of its custom resources read nothing; move it to the entries it is meant for"},
	"katalogName":              {warn: true, why: "upstream's runtime bookkeeping"},
	"katalogNamespace":         {warn: true, why: "upstream's runtime bookkeeping"},
	"leaderElection":           {warn: true, why: "this runtime elects a leader per process (orkestra run --leader-elect)"},
	"ignoreObservedGeneration": {warn: true, why: "this runtime writes status.observedGeneration only where the status schema has it"},

	"setup": {warn: true, why: "files upstream applies only when it runs outside a cluster (dev mode); apply them with kubectl first, or list sample objects under crFiles"},

	// Not implemented yet; each is an error because dropping it changes what
	// reaches the cluster.
	"deletionProtection": {why: "deletion protection is not enforced by this runtime; protect the objects with a ValidatingAdmissionPolicy"},
	"updateCRD":          {warn: true, why: "this runtime injects the CA bundle into the CRD's conversion webhook itself (orkestra manifests, dev and the built-in certificates)"},
	"participant":        {warn: true, why: "every entry of a CRD takes part in its conversion here"},
	"enabled":            {warn: true, why: "conversion runs whenever conversion paths are declared"},

	// Kinds upstream's hook blocks declare but never build (placeholders).
	"daemonSets":                  {why: placeholderKind},
	"serviceMonitors":             {why: placeholderKind},
	"podSecurityPolicies":         {why: placeholderKind},
	"priorityClasses":             {why: placeholderKind},
	"runtimeClasses":              {why: placeholderKind},
	"priorityLevelConfigurations": {why: placeholderKind},
	"podTemplates":                {why: placeholderKind},
	"storageClasses":              {why: placeholderKind},
	"storageLocations":            {why: placeholderKind},
	"storagePools":                {why: placeholderKind},
	"storageBackups":              {why: placeholderKind},
	"storageSnapshots":            {why: placeholderKind},
	"storageVolumes":              {why: placeholderKind},
	"volumes":                     {why: "volumes belong to a workload (its volumes: field), not to a hook block"},
	"volumeMounts":                {why: "volumeMounts belong to a workload (its volumeMounts: field), not to a hook block"},

	// Things that change the cluster or who may do what: errors.
	"providers":         {why: "cloud provider resources are created by calls outside Kubernetes; " + outOfScopeHTTP},
	"notification":      {why: "notifications are HTTP calls; " + outOfScopeHTTP},
	"notifications":     {why: "notifications are HTTP calls; " + outOfScopeHTTP},
	"external":          {why: "external calls are declared in a hook here (onReconcile: {external: [...]}), where their results read as external.<name>; at this place they are not supported: declare the call under onReconcile and gate what depends on it with when: on external.<name>"},
	"hooks":             {why: outOfScopeGo},
	"goHooks":           {why: outOfScopeGo},
	"constructor":       {why: outOfScopeGo},
	"autoscale":         {why: "upstream's operator autoscaler resizes the operator's own reconcile workers, queue limit and resync period on a ticker from its queue metrics (.metrics.queueDepth); here workers and resync are fixed when the controllers start, and an autoscaler on the operator's Deployment would add replicas that wait for the leader lease, not workers: set workers and resync to the do: block's values (the peak) instead; to scale a workload's replicas from conditions, declare autoscale: on its deployments, statefulSets or replicaSets entry"},
	"serve":             {why: "upstream's gateway exposes a REST surface that creates custom resources with its own tokens; this runtime serves none — create the resources with kubectl or your GitOps tool under Kubernetes RBAC"},
	"enrichAll":         {why: "enrichAll collects every kind of data upstream embeds into children (pods, events, endpoints, ReplicaSets, nodes, …), and this runtime collects pods only: list enrich: [pods]"},
	"labelSelector":     {why: "it narrows which objects the entry reconciles; write the selection as a when: condition on the resources, or use allowedNamespaces"},
	"fieldSelector":     {why: "it narrows which objects the entry reconciles; write the selection as a when: condition on the resources, or use allowedNamespaces"},
	"ignoreStatusPatch": {why: "it stops status writes; remove the status block instead"},
	"removeFinalizers":  {why: "an upstream testing switch that strips finalizers; remove the finalizers from the katalog instead"},
	"rollback":          {why: "re-applying a previous spec after failures is not supported; roll back the custom resource with your GitOps tool"},
	"rollBackOnError":   {why: "re-applying a previous spec after failures is not supported; roll back the custom resource with your GitOps tool"},
	"eventAware":        {why: "this runtime coalesces the changes of one object before its gate is evaluated (upstream's behaviour without eventAware); write the gate's condition on the object's state"},
	"remote":            {why: "an HTTP reconciler (reconcile.remote) is not run by this runtime: declare the objects it would return as resources (onCreate/onReconcile, custom: for any kind) and their state as status fields, and leave what needs code to an in-cluster controller that writes into the custom resource"},
	"postReconcile":     {why: "post-reconcile steps are not supported; declare the objects they create as resources"},
	"timeouts":          {why: "per-step timeouts are not supported; this runtime retries failed reconciles with backoff"},
	"finalizerPolicy":   {why: "finalizer policies are not supported; list the finalizers under operatorBox.finalizers"},
	"mode":              {why: "typed mode builds Go types into the operator, which this runtime does not do; remove mode (this runtime works on the objects as the API server stores them)"},
	"profile":           {why: "reconciler profiles are not supported; set workers, resync and queue directly"},
	"requeue":           {why: "requeue-after settings are not supported; set resync to bound how long a custom resource waits between reconciles"},
	"include":           {why: "include files are not supported at this place; write the block inline, or compose whole katalogs with imports.files"},
	"webhooks":          {why: "upstream's admission webhook switches; this runtime's admission rules run as API-server policies"},
	"defaults":          {why: "katalog-wide defaults are not supported; write the values on each entry"},
	"gatewayAPI":        {why: "upstream's gateway REST surface is not supported"},
	"waitFor":           {why: "give the child it waits for an id: and write dependsOn: [that id] here; readyWhen: on that child says when it is ready"},
	"children":          {why: "status read from children this way is not supported; read them in a status field value"},
	"location":          {why: "typed Go apiTypes (location, object, objectList, alias) build Go types into the operator, which this runtime does not do; remove them and keep group, version, kind and plural"},
	"object":            {why: "typed Go apiTypes (location, object, objectList, alias) build Go types into the operator, which this runtime does not do; remove them and keep group, version, kind and plural"},
	"objectList":        {why: "typed Go apiTypes (location, object, objectList, alias) build Go types into the operator, which this runtime does not do; remove them and keep group, version, kind and plural"},
	"alias":             {why: "typed Go apiTypes (location, object, objectList, alias) build Go types into the operator, which this runtime does not do; remove them and keep group, version, kind and plural"},
}

// upstreamMessage reports an unimplemented upstream key: its severity and
// message.
func upstreamMessage(name string) (warn bool, msg string) {
	k, ok := upstreamKeys[name]
	if !ok {
		return false, "is part of the original katalog format but not implemented by this runtime; remove it"
	}
	if k.warn {
		return true, "is part of the original katalog format and changes nothing in this runtime (" + k.why + "); it is ignored"
	}
	return false, "is part of the original katalog format but not supported by this runtime: " + k.why
}
