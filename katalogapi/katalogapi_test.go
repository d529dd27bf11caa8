package katalogapi

import (
	"testing"
)

// The routes a remote cross read names (upstream's BuildONCOPURL,
// orkspace/orkestra pkg/types/cross_oncop.go), each path segment escaped.
func TestRouteURL(t *testing.T) {
	cases := []struct {
		r         Route
		ns, name  string
		want      string
		perObject bool
	}{
		{RouteInfo, "", "", "http://h:8080/katalog/loader", false},
		{RouteMetrics, "", "", "http://h:8080/katalog/loader", false},
		{RouteHealth, "", "", "http://h:8080/katalog/loader/health", false},
		{RouteCR, "default", "my-loader", "http://h:8080/katalog/loader/cr/default/my-loader", true},
		{RouteCR, "", "cluster-one", "http://h:8080/katalog/loader/cr/cluster-one", true},
		{RouteEvents, "default", "a b", "http://h:8080/katalog/loader/cr/default/a%20b/events", true},
	}
	for _, tc := range cases {
		if got := tc.r.URL("http://h:8080/", "loader", tc.ns, tc.name); got != tc.want {
			t.Errorf("%s URL = %s, want %s", tc.r, got, tc.want)
		}
		if tc.r.PerObject() != tc.perObject {
			t.Errorf("%s PerObject = %v", tc.r, !tc.perObject)
		}
	}
}

// A route's answer type becomes the schema remote reads are typed by:
// scalars by kind, maps of strings as string maps, maps of anything and
// interfaces as objects of any fields, nested structs and lists as theirs.
func TestSchemaOfResponses(t *testing.T) {
	cr := Schema(RouteCR.Response())
	for field, typ := range map[string]string{"name": "string", "generation": "integer", "ready": "boolean", "labels": "object", "status": "object", "children": "object"} {
		if got := cr.Properties[field].Type; got != typ {
			t.Errorf("cr.%s is %q, want %q", field, got, typ)
		}
	}
	if l := cr.Properties["labels"]; l.AdditionalProperties == nil || l.AdditionalProperties.Structural.Type != "string" {
		t.Errorf("labels is not a map of strings: %+v", l)
	}
	if st := cr.Properties["status"]; !st.XPreserveUnknownFields {
		t.Errorf("status (the other runtime's CRD's) is not an object of any fields: %+v", st)
	}
	info := Schema(RouteInfo.Response())
	if m := info.Properties["metrics"].Properties["queueDepth"].Type; m != "integer" {
		t.Errorf("info.metrics.queueDepth is %q, want integer", m)
	}
	if st := info.Properties["storage"]; !st.Nullable || st.Properties["storedVersions"].Type != "array" || st.Properties["storedVersions"].Items.Type != "string" {
		t.Errorf("info.storage is %+v, want a nullable object with a list of strings", st)
	}
	if ev := Schema(RouteEvents.Response()).Properties["events"]; ev.Type != "array" || ev.Items.Properties["reason"].Type != "string" {
		t.Errorf("events.events is %+v", ev)
	}
	if h := Schema(RouteHealth.Response()).Properties["errorRate"].Type; h != "number" {
		t.Errorf("health.errorRate is %q, want number", h)
	}
}
