package katalogapi

import (
	"net/url"
	"strings"
)

// Route is a /katalog route a remote cross read names by its protocol
// (upstream's ONCOP, pkg/types/cross_oncop.go): which path of another
// runtime's API answers the read, and so the type of the answer.
type Route string

// The routes, by upstream's protocol names. Info and Metrics are one route
// (/katalog/{crd}: the entry's info, whose metrics object autoscale reads).
const (
	RouteInfo    Route = "info"
	RouteMetrics Route = "metrics"
	RouteHealth  Route = "health"
	RouteCR      Route = "cr"
	RouteEvents  Route = "events"
)

// Routes lists the protocols, for messages.
var Routes = []Route{RouteInfo, RouteMetrics, RouteHealth, RouteCR, RouteEvents}

// PerObject reports a route that names one custom resource (namespace and
// name go into its path).
func (r Route) PerObject() bool { return r == RouteCR || r == RouteEvents }

// URL is the route's address on the runtime at host (a base URL such as
// http://orkestra.loader-system:8080) for entry crd; namespace and name
// name the custom resource of a per-object route (namespace "" for a
// cluster-scoped one). Each segment is escaped.
func (r Route) URL(host, crd, namespace, name string) string {
	base := strings.TrimSuffix(host, "/") + "/katalog/" + url.PathEscape(crd)
	switch r {
	case RouteHealth:
		return base + "/health"
	case RouteCR, RouteEvents:
		obj := base + "/cr/"
		if namespace != "" {
			obj += url.PathEscape(namespace) + "/"
		}
		obj += url.PathEscape(name)
		if r == RouteEvents {
			obj += "/events"
		}
		return obj
	}
	return base
}

// Response is a zero value of the type the route answers with.
func (r Route) Response() any {
	switch r {
	case RouteHealth:
		return EntryHealth{}
	case RouteCR:
		return CRDetail{}
	case RouteEvents:
		return CREvents{}
	}
	return KatalogEntry{}
}
