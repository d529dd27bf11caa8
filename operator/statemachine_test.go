package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/orkspace/orkestra-cel/workloads"
)

// The state-machine example with its Jobs run by the workloads simulation
// (what `orkestra dev --simulate-workloads` runs beside the operator): the
// build Job's condition stops holding as soon as the phase moves on, and the
// Job stays, so build-and-test goes through every phase to Succeeded with
// its three Jobs present, and broken-build, whose build script ends with
// exit 2, goes to Failed at its build step without a test or notify Job.
// Nothing the operator made is deleted on the way: no delete call, no
// Deleted event. Upstream's showcase, whose README shows the same outcome:
// orkspace/orkestra examples/intermediate/08-state-machine; its Jobs are never
// deleted on a condition that stops holding (iAlexeze/orkestra
// pkg/runners/jobs.go).
func TestStateMachineExampleUnderSimulatedWorkloads(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "state-machine", "katalog.yaml")))
	simulateWorkloads(t, h.ns)
	pipelines := readExamples(t, h.ns, "state-machine", "pipelines.yaml")
	for _, p := range pipelines {
		create(t, p)
	}
	ok, broken := pipelines[0], pipelines[1]
	if ok.GetName() != "build-and-test" || broken.GetName() != "broken-build" {
		t.Fatalf("pipelines.yaml holds %s and %s", ok.GetName(), broken.GetName())
	}

	waitPhase(t, ok, "Succeeded")
	failed := waitPhase(t, broken, "Failed")
	if step, _, _ := unstructured.NestedString(failed.Object, "status", "failedStep"); step != "build" {
		t.Errorf("broken-build failedStep %q, want build", step)
	}
	h.idle("pipeline")

	want := []string{"broken-build-build", "build-and-test-build", "build-and-test-notify", "build-and-test-test"}
	never(t, 2*time.Second, "the Jobs to stay", func() error {
		var jobs batchv1.JobList
		if err := k8s.List(context.Background(), &jobs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		var names []string
		for _, j := range jobs.Items {
			if j.DeletionTimestamp != nil {
				return fmt.Errorf("job %s is being deleted", j.Name)
			}
			if strings.HasPrefix(j.Name, "build-and-test-") && j.Status.Succeeded != 1 {
				return fmt.Errorf("job %s has not succeeded: %+v", j.Name, j.Status)
			}
			names = append(names, j.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			return fmt.Errorf("jobs %v, want %v", names, want)
		}
		return nil
	})
	if d := deletes(h.client.takeWrites()); len(d) > 0 {
		t.Errorf("the operator deleted: %v", d)
	}
	if notes := eventNotes(t, h.ns, "Deleted"); len(notes) > 0 {
		t.Errorf("Deleted events: %v", notes)
	}
	created := strings.Join(eventNotes(t, h.ns, "Created"), "; ")
	for _, j := range want {
		if !strings.Contains(created, "created Job "+h.ns+"/"+j) {
			t.Errorf("no Created event for Job %s among %q", j, created)
		}
	}
}

// simulateWorkloads runs the workloads simulation for namespace ns in a
// manager of its own, as `orkestra dev --simulate-workloads` runs it beside
// the operator.
func simulateWorkloads(t *testing.T, ns string) {
	t.Helper()
	mgr, err := ctrl.NewManager(testCfg, ctrl.Options{
		Scheme:  Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := workloads.Setup(mgr, workloads.Options{Delay: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the workloads simulation stopped with: %v", err)
		}
	})
}

// readExamples reads the custom resources of a multi-document example file
// into namespace ns.
func readExamples(t testing.TB, ns string, path ...string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "examples"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		out = append(out, u)
	}
}
