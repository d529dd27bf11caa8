package simulate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/operator/external"
	"github.com/orkspace/orkestra-cel/workloads"
)

// Result is what a run did, per katalog entry that reconciles.
type Result struct {
	Entries []*EntryResult
	Elapsed time.Duration
}

// Entry returns the result of the entry named name.
func (r *Result) Entry(name string) *EntryResult {
	for _, e := range r.Entries {
		if e.Entry == name {
			return e
		}
	}
	return nil
}

// EntryResult is one entry's reconciles, cycle by cycle.
type EntryResult struct {
	Entry string
	// Objects are the custom resources the entry reconciled
	// (namespace/name), in the order of the first cycle they appeared.
	Objects []string
	Cycles  []Cycle
	// Notes say what could not run in the simulated cluster: copies from
	// another namespace whose source is not there, skipped as upstream's
	// simulate skips them.
	Notes []string
	// SteadyAt is the first cycle, from 2, that writes nothing or whose ops
	// repeat the previous cycle's (verb and resource, in order); 0 when none
	// did.
	SteadyAt int
}

// Steady reports whether the entry reached steady state.
func (e *EntryResult) Steady() bool { return e.SteadyAt > 0 }

// Errors returns the reconcile errors of every cycle.
func (e *EntryResult) Errors() []error {
	var out []error
	for _, c := range e.Cycles {
		out = append(out, c.Errors...)
	}
	return out
}

// Cycle is one reconcile of each of an entry's custom resources.
type Cycle struct {
	N      int
	Ops    []Op
	Errors []error
}

// run reconciles every custom resource of plan's reconciling entries in c
// cycles times, entries in katalog order, custom resources by namespace and
// name; between cycles the workloads get their simulated status.
func run(ctx context.Context, plan *engine.Plan, c *cluster, cycles int, calls *external.Client) (*Result, error) {
	start := time.Now()
	res := &Result{}
	note := func(entry string, _ types.NamespacedName, n string) {
		n += " — skipped, as upstream's simulate skips copies from other namespaces (put the source in spec.crFiles to run the copy)"
		if er := res.Entry(entry); er != nil && !slices.Contains(er.Notes, n) {
			er.Notes = append(er.Notes, n)
		}
	}
	op := operator.New(plan, operator.Options{Log: logr.Discard(), Registry: prometheus.NewRegistry(), SkipControllerNameValidation: true, AbsentCopySource: note, External: calls})
	rec := &recorder{scheme: c.scheme, mapper: c.mapper, base: c.client}
	d, err := op.Direct(operator.DirectOptions{Client: rec.wrap(c.client), Mapper: c.mapper, Scheme: c.scheme})
	if err != nil {
		return nil, err
	}
	var entries []*engine.Entry
	for _, e := range plan.Entries {
		if e.Enabled && e.Reconciles {
			entries = append(entries, e)
			res.Entries = append(res.Entries, &EntryResult{Entry: e.Name})
		}
	}
	for n := 1; n <= cycles; n++ {
		for i, e := range entries {
			keys, err := customResources(ctx, c, e)
			if err != nil {
				return nil, err
			}
			er := res.Entries[i]
			cyc := Cycle{N: n}
			rec.at(n, e.Name)
			for _, key := range keys {
				er.seen(key.String())
				if _, err := d.Reconcile(ctx, e.Name, key); err != nil {
					cyc.Errors = append(cyc.Errors, fmt.Errorf("%s: %w", key, err))
				}
			}
			cyc.Ops = rec.take()
			er.Cycles = append(er.Cycles, cyc)
		}
		if _, err := workloads.Step(ctx, c.client, time.Now()); err != nil {
			return nil, fmt.Errorf("simulating workload status after cycle %d: %w", n, err)
		}
	}
	for _, er := range res.Entries {
		er.SteadyAt = steadyAt(er.Cycles)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func (e *EntryResult) seen(key string) {
	for _, k := range e.Objects {
		if k == key {
			return
		}
	}
	e.Objects = append(e.Objects, key)
}

// customResources lists the entry's custom resources, by namespace and name.
func customResources(ctx context.Context, c *cluster, e *engine.Entry) ([]types.NamespacedName, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(e.GVK.GroupVersion().WithKind(e.GVK.Kind + "List"))
	if err := c.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the custom resources of entry %s: %w", e.Name, err)
	}
	keys := make([]types.NamespacedName, len(list.Items))
	for i, u := range list.Items {
		keys[i] = types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys, nil
}

// steadyAt is the first cycle, from 2, that writes nothing (the cycles
// after it can only repeat it) or whose ops have the verbs and resources of
// the previous cycle's, in order (upstream's rule). Upstream patches the
// status on every cycle, so its cycles repeat from the first one after its
// last change; this runtime writes a status only when it changed, so that
// cycle is the first one without a write here.
func steadyAt(cycles []Cycle) int {
	for i := 1; i < len(cycles); i++ {
		if !writes(cycles[i].Ops) || signature(cycles[i].Ops) == signature(cycles[i-1].Ops) {
			return cycles[i].N
		}
	}
	return 0
}

// writes reports whether ops change the cluster.
func writes(ops []Op) bool {
	for _, o := range ops {
		if o.write() {
			return true
		}
	}
	return false
}

func signature(ops []Op) string {
	var b strings.Builder
	for _, o := range ops {
		b.WriteString(o.Verb)
		b.WriteByte(' ')
		b.WriteString(o.Resource)
		if o.Subresource != "" {
			b.WriteString("/" + o.Subresource)
		}
		b.WriteByte(';')
	}
	return b.String()
}
