package manifests

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Egress: the install documents where the katalog's external calls go.
// The operator's NetworkPolicy leaves egress open (it talks to the API
// server); the calls are listed on it, and in a note, so that whoever
// narrows egress knows what to allow.

// AnnotationExternalCalls lists, on the NetworkPolicy, the katalog's
// external calls: `entry/name METHOD url` per line, the URL as written — and
// its remote cross reads: `entry/cross.<as> GET url`, the route of host:
// with {namespace} and {name} where they depend on the custom resource.
const AnnotationExternalCalls = "orkestra.orkspace.io/external-calls"

// AnnotationAllowedHosts holds the katalog's allowedHosts, comma-separated.
const AnnotationAllowedHosts = "orkestra.orkspace.io/allowed-hosts"

// externalCalls lists the plan's external calls as the annotation writes
// them; nil when there are none.
func externalCalls(plan *engine.Plan) []string {
	var out []string
	for _, e := range plan.Entries {
		if !e.Enabled || !e.Reconciles {
			continue
		}
		for _, c := range e.External {
			out = append(out, fmt.Sprintf("%s/%s %s %s", e.Name, c.Source.Name, c.Source.Method, c.Source.URL.Str))
		}
		for _, r := range e.Remote {
			out = append(out, fmt.Sprintf("%s/cross.%s GET %s", e.Name, r.Source.As, remoteURL(r.Source)))
		}
	}
	sort.Strings(out)
	return out
}

// egressAnnotations are the NetworkPolicy's annotations documenting the
// calls; nil when the katalog makes none.
func egressAnnotations(plan *engine.Plan) map[string]string {
	calls := externalCalls(plan)
	if len(calls) == 0 {
		return nil
	}
	ann := map[string]string{AnnotationExternalCalls: strings.Join(calls, "\n")}
	if hosts := plan.Katalog.AllowedHosts; hosts != nil {
		ann[AnnotationAllowedHosts] = strings.Join(hosts, ",")
	}
	return ann
}

// egressNote tells the user the install calls outside the cluster.
func egressNote(plan *engine.Plan) string {
	calls := externalCalls(plan)
	if len(calls) == 0 {
		return ""
	}
	return fmt.Sprintf("the katalog makes %d external call(s) (listed in the NetworkPolicy's %s annotation): the operator's pods need egress to them; calls to in-cluster Services or other private addresses also need orkestra run --external-allow CIDR in the Deployment's args", len(calls), AnnotationExternalCalls)
}

// remoteURL is the URL a remote cross read asks, as the annotation shows
// it: the endpoint as written, or host:'s route.
func remoteURL(ob *katalog.Observation) string {
	src := ob.Remote
	if src.Endpoint != nil {
		return src.Endpoint.Str
	}
	// The route's segments are escaped; the placeholders are shown as such.
	return strings.NewReplacer("%7Bnamespace%7D", "{namespace}", "%7Bname%7D", "{name}").Replace(src.Protocol.URL(src.Host, ob.Entry, "{namespace}", "{name}"))
}
