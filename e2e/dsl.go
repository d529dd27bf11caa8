package e2e

import (
	"context"
	"fmt"
)

// checkKubectl runs a kubectl: block (upstream's checkKubectl): the
// mutations in their fixed order, then every read with its assertions. The
// first error stops it.
func (k *kube) checkKubectl(ctx context.Context, b *Kubectl, dir string) error {
	steps := []func() error{}
	add := func(sub string, n int, f func(i int) error) {
		for i := 0; i < n; i++ {
			steps = append(steps, func() error {
				if err := f(i); err != nil {
					return prefixErr(fmt.Sprintf("kubectl.%s[%d]", sub, i), err)
				}
				return nil
			})
		}
	}
	add("apply", len(b.Apply), func(i int) error { return k.apply(ctx, b.Apply[i], dir) })
	add("patch", len(b.Patch), func(i int) error { return k.patch(ctx, b.Patch[i]) })
	add("restart", len(b.Restart), func(i int) error { return k.rollout(ctx, b.Restart[i]) })
	add("scale", len(b.Scale), func(i int) error { return k.rollout(ctx, b.Scale[i]) })
	add("delete", len(b.Delete), func(i int) error { return k.delete(ctx, b.Delete[i]) })
	add("get", len(b.Get), func(i int) error { return checked(k.getOutput(ctx, b.Get[i]))(b.Get[i].Assert) })
	add("logs", len(b.Logs), func(i int) error { return checked(k.logs(ctx, b.Logs[i]))(b.Logs[i].Assert) })
	add("describe", len(b.Describe), func(i int) error { return checked(k.describe(ctx, b.Describe[i]))(b.Describe[i].Assert) })
	add("exec", len(b.Exec), func(i int) error { return checked(k.exec(ctx, b.Exec[i]))(b.Exec[i].Assert) })
	add("port-forward", len(b.PortForward), func(i int) error { return k.portForward(ctx, b.PortForward[i], false).err })
	add("events", len(b.Events), func(i int) error { return checked(k.events(ctx, b.Events[i]))(b.Events[i].Assert) })
	add("auth", len(b.Auth), func(i int) error { return checked(k.auth(ctx, b.Auth[i]))(b.Auth[i].Assert) })
	add("cp", len(b.Cp), func(i int) error { return checked(k.cp(ctx, b.Cp[i]))(b.Cp[i].Assert) })
	add("top", len(b.Top), func(i int) error { return checked(k.top(ctx, b.Top[i]))(b.Top[i].Assert) })
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// checked asserts a read's output, showing it when an assertion fails.
func checked(out string, err error) func(Assertions) error {
	return func(a Assertions) error {
		if err != nil {
			return err
		}
		if err := a.Check(out); err != nil {
			return fmt.Errorf("%w\noutput: %s", err, out)
		}
		return nil
	}
}

// prefixErr names the DSL entry an error comes from, keeping a cannotRun
// a cannotRun.
func prefixErr(prefix string, err error) error {
	if r := skipReason(err); r != "" {
		return cannotRunf("%s: %s", prefix, r)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// diagnose runs the reads of a block for onFailure and returns what each
// printed, assertions ignored.
func (k *kube) diagnose(ctx context.Context, b *Kubectl) []string {
	var out []string
	show := func(title, text string, err error) {
		if err != nil {
			text = "error: " + err.Error()
		}
		out = append(out, title+"\n"+text)
	}
	for _, g := range b.Get {
		if g.Field == "" && g.Format == "" {
			g = &KGet{Target: g.Target, Format: "yaml"}
		}
		o, err := k.getOutput(ctx, g)
		show(fmt.Sprintf("kubectl get %s %s", g.Target.Kind, g.Target.Name), o, err)
	}
	for _, l := range b.Logs {
		o, err := k.logs(ctx, l)
		show("kubectl logs "+describeTarget(l.Target), o, err)
	}
	for _, d := range b.Describe {
		o, err := k.describe(ctx, d)
		show(fmt.Sprintf("kubectl describe %s %s", d.Target.Kind, describeTarget(d.Target)), o, err)
	}
	for _, x := range b.Exec {
		o, err := k.exec(ctx, x)
		show(fmt.Sprintf("kubectl exec %s -- %v", describeTarget(x.Target), x.Command), o, err)
	}
	for _, p := range b.PortForward {
		r := k.portForward(ctx, p, true)
		show(fmt.Sprintf("port-forward %s %s", p.Path, r.target), r.body, r.err)
	}
	for _, e := range b.Events {
		o, err := k.events(ctx, e)
		show(fmt.Sprintf("kubectl events --for %s/%s", e.Target.Kind, e.Target.Name), o, err)
	}
	for _, a := range b.Auth {
		o, err := k.auth(ctx, a)
		show(fmt.Sprintf("kubectl auth can-i %s %s", a.Verb, a.Resource), o, err)
	}
	for _, c := range b.Cp {
		o, err := k.cp(ctx, c)
		show("kubectl cp "+c.Src, o, err)
	}
	for _, t := range b.Top {
		o, err := k.top(ctx, t)
		show("kubectl top "+t.Target.Kind, o, err)
	}
	return out
}

func describeTarget(t Target) string {
	switch {
	case t.Lease != nil:
		return "the holder of Lease " + t.Lease.Lease
	case t.LabelSelector != "":
		return "-l " + t.LabelSelector
	}
	return t.Name
}
