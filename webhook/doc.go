// Package webhook serves a compiled katalog over HTTP: the HTTPS /convert
// ConversionReview webhook the API server calls to convert custom resources
// between versions, and beside it, over plain HTTP, /metrics, /healthz,
// /readyz and the /katalog health API. `orkestra serve` runs it alone;
// `orkestra run` runs it beside the reconcilers (Server.Runtime then supplies
// each entry's workers, resource count and health).
//
// The request path only evaluates what engine.Compile built: it never parses
// YAML or compiles an expression. A review is decoded in one pass (the
// objects straight into unstructured content), converted object by object
// through a Converter (engine/conversion), checked (metadata other than
// labels and annotations must not change), and encoded once.
//
// Conversion metrics count objects, not reviews:
// orkestra_conversion_requests_total{kind,from_version,to_version,result},
// orkestra_conversion_duration_seconds{kind,from_version,to_version} and
// orkestra_conversion_active_requests{kind}. The /katalog API reports, per
// entry, the conversions whose target is the entry's version.
package webhook
