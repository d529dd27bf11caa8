package katalog

// Endpoints switches an entry's routes of the runtime's HTTP API, as
// upstream's `endpoints:` does (its CRDEntry.IsHealthEnabled, IsInfoEnabled
// and IsEnabledAllEndpoints; examples/advanced/19-endpoint-control): a
// route switched off is not served at all, so it answers 404 as any path
// the server does not know. The entry stays in the /katalog summary either
// way. Reconciling is not affected.
type Endpoints struct {
	// Health serves /katalog/{entry}/health.
	Health bool
	// Info serves /katalog/{entry} and its custom resources under
	// /katalog/{entry}/cr.
	Info bool
	Pos  Pos
}

// AllEndpoints is an entry's default: every route served.
var AllEndpoints = Endpoints{Health: true, Info: true}

var endpointKeys = []string{"enabled", "health", "info", "validation"}

// endpoints decodes an entry's `endpoints:`. enabled: false turns every
// route off, whatever health and info say (upstream registers none then).
// validation is upstream's switch of its /validate webhook for the entry:
// this runtime's validation rules run in the API server, not behind an
// endpoint, so turning it off while the entry has rules is an error (the
// rules would still be enforced), and a warning otherwise.
func (d *decoder) endpoints(e *CRDEntry, f field) {
	o := d.mapping(f.value, "endpoints", endpointKeys, nil)
	ep := AllEndpoints
	ep.Pos = d.pos(f.key)
	if v, ok := o["health"]; ok {
		ep.Health = d.boolean(v.value, "endpoints.health")
	}
	if v, ok := o["info"]; ok {
		ep.Info = d.boolean(v.value, "endpoints.info")
	}
	if v, ok := o["enabled"]; ok && !d.boolean(v.value, "endpoints.enabled") {
		ep.Health, ep.Info = false, false
	}
	if v, ok := o["validation"]; ok && !d.boolean(v.value, "endpoints.validation") {
		if e.Admission != nil && len(e.Admission.Validation) > 0 {
			d.errorf(v.key, "endpoints.validation", "validation: false turns off upstream's admission webhook for this entry, but this runtime enforces the entry's validation rules in the API server (a ValidatingAdmissionPolicy), not behind an endpoint; remove the validation rules to stop enforcing them, or remove this key")
		} else {
			d.warnf(v.key, "endpoints.validation", "validation: false turns off upstream's admission webhook for this entry; the entry declares no validation rules, so nothing changes here")
		}
	}
	e.Endpoints = ep
}
