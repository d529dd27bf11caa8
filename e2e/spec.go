// Package e2e runs upstream Orkestra's declarative end-to-end specs
// (`kind: E2E`) on a cluster: the CRDs and setup applied, the operator
// running, the custom resources applied and deleted, and expectations on
// resources, shell commands and a kubectl DSL polled after each lifecycle
// event. The format is upstream's, read as written (pkg/types/e2e.go of
// iAlexeze/orkestra); the kubectl DSL is implemented natively with
// client-go.
package e2e

import (
	"time"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Pos is a position in a spec file.
type Pos = katalog.Pos

// Lifecycle events an expectation runs after.
const (
	AfterSetupComplete = "setup-complete"
	AfterCRApplied     = "cr-applied"
	AfterCRDeleted     = "cr-deleted"
)

// DefaultTimeout is an expectation's timeout when it gives none (upstream's).
const DefaultTimeout = 60 * time.Second

// Spec is one E2E spec file, its paths resolved against its directory and
// its includes expanded.
type Spec struct {
	File, Dir         string
	Name, Description string
	// Katalog is the katalog (or Komposer) under test, "" when none.
	Katalog string
	// CRDs (crd, then crdFiles) and CRs (cr, then crFiles), in order.
	CRDs, CRs []string
	// Custom: no Orkestra operator runs (custom.target: kubernetes, or the
	// older customOperator: true); the cluster, setup, CRs and assertions
	// run unchanged.
	Custom    bool
	Cluster   ClusterSpec
	Setup     Setup
	Notes     []*katalog.Note
	Expect    []*Expectation
	OnFailure *OnFailure
	Imports   []*Import
}

// Aggregator reports a spec with nothing of its own to run: imports only.
func (s *Spec) Aggregator() bool {
	return s.Katalog == "" && len(s.CRs) == 0 && len(s.CRDs) == 0 && !s.Custom && len(s.Expect) == 0
}

// ClusterSpec is spec.cluster: where the test runs.
type ClusterSpec struct {
	Pos      Pos
	Provider string
	Name     string
	Reuse    bool
}

// Setup is spec.setup: files applied, Helm charts installed and resources
// waited for, in that order, before the operator starts.
type Setup struct {
	Apply []*SetupApply
	Helm  []*HelmInstall
	Wait  []*Wait
}

// SetupApply is one file applied during setup, with waits after it.
type SetupApply struct {
	Pos  Pos
	Path string
	Wait []*Wait
}

// HelmInstall is a chart installed with `helm upgrade --install`.
type HelmInstall struct {
	Pos                  Pos
	Repo, Chart, Release string
	Namespace, Version   string
	ValueFiles           []string
	Values               map[string]any
	CreateNamespace      bool
	Wait                 []*Wait
}

// Wait blocks until a resource exists (and, with Ready, is ready).
type Wait struct {
	Pos                   Pos
	Kind, Name, Namespace string
	Ready                 bool
	Timeout               time.Duration
}

// Expectation is one named checkpoint of spec.expect.
type Expectation struct {
	Pos     Pos
	Name    string
	After   string
	Timeout time.Duration
	// Wait is slept before the first check.
	Wait      time.Duration
	Resources []*ResourceCheck
	Commands  []*Command
	Kubectl   *Kubectl
	// When (all hold) and Or (one holds) gate the checkpoint: when they do
	// not hold it is skipped.
	When, Or  *katalog.When
	OnFailure *OnFailure
	// Dir resolves relative paths (the directory of the file it is
	// written in: the spec's, or an included file's).
	Dir string
}

// ResourceCheck asserts that resources of a kind exist, how many, and
// whether they are ready.
type ResourceCheck struct {
	Pos                   Pos
	Kind, Name, Namespace string
	// Count: nil means at least one; 0 means none.
	Count *int
	Ready bool
}

// Command runs `sh -c Run` and asserts its exit code and combined output.
type Command struct {
	Pos      Pos
	Run      string
	ExitCode int
	Assert   Assertions
}

// OnFailure is run and printed when an expectation (or, at spec level, any
// expectation) fails: the DSL's reads with their assertions ignored, and
// shell commands.
type OnFailure struct {
	Pos      Pos
	Kubectl  *Kubectl
	Commands []string
}

// Import is another spec run after this one.
type Import struct {
	Pos          Pos
	Path         string
	FreshCluster bool
	Wait         time.Duration
	Spec         *Spec
}
