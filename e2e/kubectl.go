package e2e

import "time"

// Kubectl is an expectation's `kubectl:` block. Mutations run first, in a
// fixed order (apply, patch, restart, scale, delete), then the reads, each
// with its assertions — upstream's order whatever the YAML's.
type Kubectl struct {
	Apply       []*KApply
	Patch       []*KPatch
	Restart     []*KRollout
	Scale       []*KRollout
	Delete      []*KDelete
	Get         []*KGet
	Logs        []*KLogs
	Describe    []*KDescribe
	Exec        []*KExec
	PortForward []*KPortForward
	Events      []*KEvents
	Auth        []*KAuth
	Cp          []*KCp
	Top         []*KTop
}

// Target names the object a DSL entry acts on.
type Target struct {
	Kind, Name, Namespace string
	LabelSelector         string
	// Lease resolves a pod from a Lease holder (leaderElection).
	Lease *LeaseRef
}

// LeaseRef is `leaderElection:`: the pod named by a Lease's holderIdentity.
type LeaseRef struct {
	Lease, Namespace string
}

// Extract is jq/yq applied to an output before its assertions.
type Extract struct {
	JQ, YQ string
}

// KGet reads an object: a jsonpath field, or the whole object as JSON or
// YAML (optionally through jq/yq).
type KGet struct {
	Pos    Pos
	Target Target
	Field  string
	Format string
	Extract
	Assert Assertions
}

// KLogs reads container logs.
type KLogs struct {
	Pos       Pos
	Target    Target
	Container string
	Since     time.Duration
	Extract
	Assert Assertions
}

// KDescribe is `kubectl describe`'s text.
type KDescribe struct {
	Pos    Pos
	Target Target
	Assert Assertions
}

// KExec runs a command in a container.
type KExec struct {
	Pos       Pos
	Target    Target
	Container string
	Command   []string
	Extract
	Assert Assertions
}

// KPortForward makes an HTTP request to a port of a service, a pod or a
// Lease holder.
type KPortForward struct {
	Pos     Pos
	Service string
	Pod     string
	Target  Target
	Port    int
	Path    string
	Method  string
	Headers map[string]string
	Body    string
	Wait    time.Duration
	// StatusCode, when set, asserts the response status only.
	StatusCode int
	Extract
	Assert Assertions
}

// KApply applies a file or an inline manifest.
type KApply struct {
	Pos       Pos
	File      string
	Inline    string
	Namespace string
	ExitCode  int
	Assert    Assertions
}

// KDelete deletes the objects of a file, one object, or a Lease holder pod.
type KDelete struct {
	Pos            Pos
	File           string
	Target         Target
	IgnoreNotFound bool
}

// KPatch patches an object (merge, strategic or json).
type KPatch struct {
	Pos    Pos
	Target Target
	Type   string
	Patch  string
}

// KRollout is `restart` (Replicas nil) or `scale`, waiting for the rollout
// unless Ready is false.
type KRollout struct {
	Pos      Pos
	Target   Target
	Replicas *int
	Ready    bool
}

// KEvents lists the events of an object.
type KEvents struct {
	Pos    Pos
	Target Target
	Assert Assertions
}

// KAuth asks `kubectl auth can-i`: "yes" or "no".
type KAuth struct {
	Pos       Pos
	Verb      string
	Resource  string
	Namespace string
	As        string
	Assert    Assertions
}

// KCp reads a file out of a container.
type KCp struct {
	Pos       Pos
	Target    Target
	Container string
	Src       string
	Extract
	Assert Assertions
}

// KTop reads pod or node metrics.
type KTop struct {
	Pos        Pos
	Target     Target
	Containers bool
	Assert     Assertions
}
