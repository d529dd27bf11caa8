package e2e

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orkspace/orkestra-cel/specyaml"
	"gopkg.in/yaml.v3"
)

var (
	kubectlKeys = []string{"get", "logs", "describe", "exec", "port-forward", "apply", "delete", "patch",
		"events", "auth", "cp", "top", "restart", "scale"}
	leaseKeys = []string{"lease", "namespace"}
	dslKeys   = map[string][]string{
		"get":          {"kind", "name", "namespace", "field", "format", "jq", "yq"},
		"logs":         {"name", "labelSelector", "leaderElection", "namespace", "container", "since", "jq"},
		"describe":     {"kind", "name", "labelSelector", "namespace"},
		"exec":         {"name", "labelSelector", "leaderElection", "namespace", "container", "command", "jq", "yq"},
		"port-forward": {"service", "pod", "namespace", "leaderElection", "port", "path", "method", "headers", "body", "wait", "jq", "yq", "statusCode"},
		"apply":        {"file", "inline", "namespace", "exitCode"},
		"delete":       {"file", "kind", "name", "namespace", "leaderElection", "ignoreNotFound"},
		"patch":        {"kind", "name", "namespace", "type", "patch"},
		"events":       {"kind", "name", "namespace"},
		"auth":         {"verb", "resource", "namespace", "as"},
		"cp":           {"name", "labelSelector", "namespace", "container", "src", "jq", "yq"},
		"top":          {"kind", "name", "labelSelector", "namespace", "containers"},
		"restart":      {"kind", "name", "namespace", "ready"},
		"scale":        {"kind", "name", "namespace", "replicas", "ready"},
	}
	// asserting are the subcommands that take the assertion keys.
	asserting = map[string]bool{"get": true, "logs": true, "describe": true, "exec": true, "port-forward": true,
		"apply": true, "events": true, "auth": true, "cp": true, "top": true}
)

func (k *Kubectl) empty() bool {
	return k == nil || len(k.Get)+len(k.Logs)+len(k.Describe)+len(k.Exec)+len(k.PortForward)+len(k.Apply)+
		len(k.Delete)+len(k.Patch)+len(k.Events)+len(k.Auth)+len(k.Cp)+len(k.Top)+len(k.Restart)+len(k.Scale) == 0
}

// dslEntry is one decoded DSL entry: its fields and position.
type dslEntry struct {
	r    *reader
	n    *yaml.Node
	f    fields
	p    string
	diag bool
}

func (e dslEntry) s(k string) string { return e.r.Str(e.f.V(k), e.p+"."+k) }

// need reports a missing required key.
func (e dslEntry) need(keys ...string) {
	for _, k := range keys {
		if e.s(k) == "" {
			e.r.Errorf(e.n, e.p+"."+k, "%s is required", k)
		}
	}
}

func (e dslEntry) target(kindKey bool) Target {
	t := Target{Name: e.s("name"), Namespace: e.s("namespace"), LabelSelector: e.s("labelSelector")}
	if kindKey {
		t.Kind = e.s("kind")
	}
	if e.f.Has("leaderElection") {
		lf := e.r.Mapping(e.f.V("leaderElection"), e.p+".leaderElection", leaseKeys, nil)
		t.Lease = &LeaseRef{Lease: e.r.Str(lf.V("lease"), e.p+".leaderElection.lease"), Namespace: e.r.Str(lf.V("namespace"), e.p+".leaderElection.namespace")}
		if t.Lease.Lease == "" {
			e.r.Errorf(e.f.V("leaderElection"), e.p+".leaderElection.lease", "leaderElection needs lease: (the Lease whose holder is the pod)")
		}
	}
	return t
}

// pod checks that exactly one way to find a pod is given.
func (e dslEntry) pod(t Target) {
	n := 0
	for _, set := range []bool{t.Name != "", t.LabelSelector != "", t.Lease != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		e.r.Errorf(e.n, e.p, "name the pod with exactly one of name:, labelSelector: and leaderElection:")
	}
}

func (e dslEntry) extract() Extract {
	return Extract{JQ: e.s("jq"), YQ: e.s("yq")}
}

func (e dslEntry) assert() Assertions {
	a := e.r.assertions(e.f, e.p)
	if !e.diag && !a.Any() {
		e.r.Errorf(e.n, e.p, "at least one assertion is required (%s)", strings.Join(AssertionKeys, ", "))
	}
	return a
}

// kubectl reads a `kubectl:` block; diag: in onFailure, where output is
// printed and assertions are not required.
func (r *reader) kubectl(n *yaml.Node, path, dir string, diag bool) *Kubectl {
	k := &Kubectl{}
	top := r.Mapping(n, path, kubectlKeys, nil)
	for _, sub := range kubectlKeys {
		for i, it := range r.Items(top.V(sub), path+"."+sub) {
			p := fmt.Sprintf("%s.%s[%d]", path, sub, i)
			keys := dslKeys[sub]
			if asserting[sub] {
				keys = append(append([]string(nil), keys...), AssertionKeys...)
			}
			e := dslEntry{r: r, n: it, f: r.Mapping(it, p, keys, nil), p: p, diag: diag}
			r.dslEntry(k, sub, e, dir)
		}
	}
	return k
}

func (r *reader) dslEntry(k *Kubectl, sub string, e dslEntry, dir string) {
	pos := r.Pos(e.n)
	switch sub {
	case "get":
		g := &KGet{Pos: pos, Target: e.target(true), Field: e.s("field"), Format: e.s("format"), Extract: e.extract(), Assert: e.assert()}
		e.need("kind", "name")
		r.checkGet(e, g)
		k.Get = append(k.Get, g)
	case "logs":
		l := &KLogs{Pos: pos, Target: e.target(false), Container: e.s("container"), Since: r.Duration(e.f.V("since"), e.p+".since"), Extract: e.extract(), Assert: e.assert()}
		e.pod(l.Target)
		k.Logs = append(k.Logs, l)
	case "describe":
		d := &KDescribe{Pos: pos, Target: e.target(true), Assert: e.assert()}
		e.need("kind")
		if d.Target.Name == "" && d.Target.LabelSelector == "" {
			r.Errorf(e.n, e.p, "name the objects with name: or labelSelector:")
		}
		k.Describe = append(k.Describe, d)
	case "exec":
		x := &KExec{Pos: pos, Target: e.target(false), Container: e.s("container"), Command: r.StrList(e.f.V("command"), e.p+".command"), Extract: e.extract(), Assert: e.assert()}
		e.pod(x.Target)
		if len(x.Command) == 0 {
			r.Errorf(e.n, e.p+".command", "command is required (a list: [sh, -c, \"…\"])")
		}
		k.Exec = append(k.Exec, x)
	case "port-forward":
		k.PortForward = append(k.PortForward, r.portForward(e))
	case "apply":
		a := &KApply{Pos: pos, Inline: e.s("inline"), Namespace: e.s("namespace"), Assert: e.r.assertions(e.f, e.p)}
		a.File = r.Existing(e.f.V("file"), e.p+".file", dir)
		if e.f.Has("exitCode") {
			a.ExitCode, _ = r.Int(e.f.V("exitCode"), e.p+".exitCode")
		}
		if e.f.Has("file") == (a.Inline != "") {
			r.Errorf(e.n, e.p, "give exactly one of file: and inline:")
		}
		k.Apply = append(k.Apply, a)
	case "delete":
		d := &KDelete{Pos: pos, Target: e.target(true), IgnoreNotFound: r.Bool(e.f.V("ignoreNotFound"), e.p+".ignoreNotFound")}
		d.File = r.Existing(e.f.V("file"), e.p+".file", dir)
		byName := d.Target.Kind != "" || d.Target.Name != ""
		switch {
		case d.Target.Lease != nil && (e.f.Has("file") || byName):
			r.Errorf(e.n, e.p, "leaderElection is mutually exclusive with file, kind and name")
		case d.Target.Lease == nil && e.f.Has("file") && byName:
			r.Errorf(e.n, e.p, "file and kind/name are mutually exclusive")
		case d.Target.Lease == nil && !e.f.Has("file") && (d.Target.Kind == "" || d.Target.Name == ""):
			r.Errorf(e.n, e.p, "give file:, or kind: and name:, or leaderElection:")
		}
		k.Delete = append(k.Delete, d)
	case "patch":
		pt := &KPatch{Pos: pos, Target: e.target(true), Type: e.s("type"), Patch: e.s("patch")}
		e.need("kind", "name", "patch")
		if !slices.Contains([]string{"", "merge", "strategic", "json"}, pt.Type) {
			r.Errorf(e.f.V("type"), e.p+".type", "type must be merge, strategic or json, got %q", pt.Type)
		}
		k.Patch = append(k.Patch, pt)
	case "events":
		ev := &KEvents{Pos: pos, Target: e.target(true), Assert: e.assert()}
		e.need("kind", "name")
		k.Events = append(k.Events, ev)
	case "auth":
		a := &KAuth{Pos: pos, Verb: e.s("verb"), Resource: e.s("resource"), Namespace: e.s("namespace"), As: e.s("as"), Assert: e.assert()}
		e.need("verb", "resource")
		k.Auth = append(k.Auth, a)
	case "cp":
		c := &KCp{Pos: pos, Target: e.target(false), Container: e.s("container"), Src: e.s("src"), Extract: e.extract(), Assert: e.assert()}
		e.need("src")
		if c.Target.Name == "" && c.Target.LabelSelector == "" {
			r.Errorf(e.n, e.p, "name the pod with name: or labelSelector:")
		}
		k.Cp = append(k.Cp, c)
	case "top":
		t := &KTop{Pos: pos, Target: e.target(true), Containers: r.Bool(e.f.V("containers"), e.p+".containers"), Assert: e.assert()}
		if !slices.Contains([]string{"pod", "pods", "node", "nodes"}, strings.ToLower(t.Target.Kind)) {
			r.Errorf(e.n, e.p+".kind", "kind must be pod or node, got %q", t.Target.Kind)
		}
		k.Top = append(k.Top, t)
	case "restart", "scale":
		ro := &KRollout{Pos: pos, Target: e.target(true), Ready: true}
		e.need("kind", "name")
		if e.f.Has("ready") {
			ro.Ready = r.Bool(e.f.V("ready"), e.p+".ready")
		}
		if sub == "restart" {
			k.Restart = append(k.Restart, ro)
			return
		}
		if v, ok := r.Int(e.f.V("replicas"), e.p+".replicas"); ok && v >= 0 {
			ro.Replicas = &v
		} else {
			r.Errorf(e.n, e.p+".replicas", "scale needs replicas: (0 or more)")
		}
		k.Scale = append(k.Scale, ro)
	}
}

func (r *reader) checkGet(e dslEntry, g *KGet) {
	switch {
	case g.Field == "" && g.Format == "" && !e.diag:
		r.Errorf(e.n, e.p, "give field: (a jsonpath such as .status.phase) or format: (json or yaml)")
	case g.Format != "" && g.Format != "json" && g.Format != "yaml":
		r.Errorf(e.f.V("format"), e.p+".format", "format must be json or yaml, got %q", g.Format)
	}
	if g.JQ != "" && g.Format != "json" {
		r.Errorf(e.f.V("jq"), e.p+".jq", "jq needs format: json (as upstream)")
	}
	if g.YQ != "" && g.Format != "yaml" {
		r.Errorf(e.f.V("yq"), e.p+".yq", "yq needs format: yaml (as upstream)")
	}
}

func (r *reader) portForward(e dslEntry) *KPortForward {
	pf := &KPortForward{Pos: r.Pos(e.n), Service: e.s("service"), Pod: e.s("pod"), Target: e.target(false), Path: e.s("path"),
		Method: strings.ToUpper(e.s("method")), Body: e.s("body"), Wait: r.Duration(e.f.V("wait"), e.p+".wait"), Extract: e.extract()}
	pf.Assert = r.assertions(e.f, e.p)
	pf.Port, _ = r.Int(e.f.V("port"), e.p+".port")
	if e.f.Has("statusCode") {
		pf.StatusCode, _ = r.Int(e.f.V("statusCode"), e.p+".statusCode")
	}
	if hn := e.f.V("headers"); hn != nil {
		for k, v := range r.Mapping(hn, e.p+".headers", headerNames(hn), nil) {
			if pf.Headers == nil {
				pf.Headers = map[string]string{}
			}
			pf.Headers[k] = r.Str(v.Value, e.p+".headers."+k)
		}
	}
	if pf.Method == "" {
		pf.Method = "GET"
	}
	switch {
	case pf.Target.Lease == nil && pf.Service == "" && pf.Pod == "":
		r.Errorf(e.n, e.p, "name the target with service:, pod: or leaderElection:")
	case pf.Port <= 0:
		r.Errorf(e.n, e.p+".port", "port must be a port number (> 0)")
	case (pf.Assert.Any() || pf.StatusCode != 0) && pf.Path == "":
		r.Errorf(e.n, e.p+".path", "path is required when assertions are set (the HTTP path requested)")
	case pf.StatusCode != 0 && (pf.Assert.Any() || pf.JQ != "" || pf.YQ != ""):
		r.Errorf(e.f.V("statusCode"), e.p+".statusCode", "statusCode asserts the status only: it cannot be combined with jq, yq or output assertions (as upstream)")
	case !e.diag && !pf.Assert.Any() && pf.StatusCode == 0:
		r.Errorf(e.n, e.p, "at least one assertion is required (statusCode, %s)", strings.Join(AssertionKeys, ", "))
	}
	return pf
}

// headerNames are a headers map's keys: any name is allowed.
func headerNames(n *yaml.Node) []string {
	n = specyaml.Resolve(n)
	var out []string
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}
