package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// expectations runs spec.expect in order. The custom resources are applied
// at the first cr-applied expectation and deleted at the first cr-deleted
// one, once each (upstream's runner.go).
func (x *run) expectations(ctx context.Context) {
	applied, deleted := false, false
	for _, e := range x.spec.Expect {
		switch {
		case e.After == AfterCRApplied && !applied && !deleted:
			applied = true
			if err := x.applyCRs(ctx); err != nil {
				x.record(Case{Name: "apply the custom resources", Status: Failed, Detail: err.Error()})
				x.skipRest(e, "the custom resources were not applied")
				return
			}
		case e.After == AfterCRDeleted && !deleted:
			deleted = true
			x.deleteCRs(ctx)
		}
		c := x.expectation(ctx, e)
		x.record(c)
		if c.Status == Failed && e.OnFailure != nil {
			x.onFailure(ctx, e.OnFailure, e.Dir)
		}
	}
}

func (x *run) skipRest(from *Expectation, why string) {
	skip := false
	for _, e := range x.spec.Expect {
		if e == from {
			skip = true
		}
		if skip {
			x.record(Case{Name: e.Name, Status: Skipped, Detail: why})
		}
	}
}

func (x *run) applyCRs(ctx context.Context) error {
	fmt.Fprintln(x.r.Out, "→ applying the custom resources")
	for _, f := range x.spec.CRs {
		objs, err := readManifest(f)
		if err != nil {
			return err
		}
		if out, code := x.k.applyObjects(ctx, objs, ""); code != 0 {
			return fmt.Errorf("%s: %s", f, out)
		}
	}
	return nil
}

// deleteCRs deletes the custom resources (not found is fine), waiting for
// them to be gone as kubectl delete does.
func (x *run) deleteCRs(ctx context.Context) {
	fmt.Fprintln(x.r.Out, "→ deleting the custom resources")
	x.crsDone = true
	for _, t := range x.targetsOf(x.spec.CRs) {
		if err := x.k.deleteOne(ctx, t, true); err != nil {
			fmt.Fprintf(x.r.Out, "  ! %v\n", err)
		}
	}
}

// expectation runs one checkpoint: its gate, its wait, then its checks
// polled until they all pass or its timeout.
func (x *run) expectation(ctx context.Context, e *Expectation) Case {
	c := Case{Name: e.Name}
	if gate := x.gates[e]; gate != nil {
		ok, err := gate.Eval(engine.NewScope(map[string]any{}))
		switch {
		case err != nil:
			c.Status, c.Detail = Failed, fmt.Sprintf("when/or: %v", err)
			return c
		case !ok:
			c.Status, c.Detail = Gated, "its when/or does not hold ("+gate.Source()+")"
			return c
		}
	}
	fmt.Fprintf(x.r.Out, "  waiting for %q (timeout %s)\n", e.Name, e.Timeout)
	start := time.Now()
	if e.Wait > 0 {
		select {
		case <-time.After(e.Wait):
		case <-ctx.Done():
		}
	}
	err := x.poll(ctx, e)
	c.Elapsed = time.Since(start)
	switch reason := skipReason(err); {
	case err == nil:
		c.Status = Passed
	case reason != "":
		c.Status, c.Detail = Skipped, reason
	default:
		c.Status, c.Detail = Failed, err.Error()
	}
	return c
}

// poll checks until everything passes, a check cannot run here, or the
// timeout; a pod that never started by then skips the expectation.
func (x *run) poll(ctx context.Context, e *Expectation) error {
	pctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	interval := x.r.Poll
	if interval == 0 {
		interval = 500 * time.Millisecond
	}
	var last error
	for {
		last = x.check(pctx, e)
		if last == nil || skipReason(last) != "" {
			return last
		}
		select {
		case <-pctx.Done():
			var ns *notStarted
			if errors.As(last, &ns) {
				return cannotRunf("%s", ns.reason)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("timed out after %s: %w", e.Timeout, last)
		case <-time.After(interval):
		}
	}
}

// check runs one round of an expectation's checks in upstream's order:
// commands (actions may come first), the kubectl block, then resources.
func (x *run) check(ctx context.Context, e *Expectation) error {
	for i, c := range e.Commands {
		if err := x.k.checkCommand(ctx, c, e.Dir); err != nil {
			return prefixErr(fmt.Sprintf("commands[%d]", i), err)
		}
	}
	if e.Kubectl != nil {
		if err := x.k.checkKubectl(ctx, e.Kubectl, e.Dir); err != nil {
			return err
		}
	}
	for i, r := range e.Resources {
		if err := x.k.checkResource(ctx, r); err != nil {
			return prefixErr(fmt.Sprintf("resources[%d]", i), err)
		}
	}
	return nil
}

// onFailure prints diagnostics: the DSL's reads (assertions ignored) and
// shell commands, each with its output.
func (x *run) onFailure(ctx context.Context, o *OnFailure, dir string) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if o.Kubectl != nil {
		for _, s := range x.k.diagnose(ctx, o.Kubectl) {
			fmt.Fprintf(x.r.Out, "    ── %s\n", indent(s, "    "))
		}
	}
	for _, c := range o.Commands {
		out, code, err := x.k.shell(ctx, c, dir, "")
		if err != nil {
			out = err.Error()
		}
		fmt.Fprintf(x.r.Out, "    ── $ %s (exit %d)\n%s\n", firstLine(c), code, indent(strings.TrimRight(out, "\n"), "    "))
	}
}
