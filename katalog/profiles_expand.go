package katalog

import (
	"slices"
	"strings"
)

// Where profiles are written and what they expand into (upstream:
// pkg/profiles/docs/03-adding-a-profile.md "Profile field placement"):
//
//	resources: {profile}               workloads' requests and limits
//	securityContext: {profile}         the container's security context
//	podSecurity: {profile | fields}    podSecurityContext
//	probes: {liveness|readiness|startup: {type, path, port, command, profile | timings}}
//	                                   livenessProbe, readinessProbe, startupProbe
//	rollingUpdate: {profile}           a Deployment's maxSurge and maxUnavailable
//	pdb behavior: {profile | minAvailable | maxUnavailable}
//	hpa behavior: {profile | scaleUp, scaleDown}, and the profile's CPU target
//	networkPolicies, resourceQuotas, limitRanges: profile
//	operatorBox.reconciler.profile     workers, resync, queue.maxDepth
//
// A profile and the fields it stands for are not written together (upstream
// refuses the mix). A name that is an expression becomes a selection among
// every profile of its class, evaluated when the object is reconciled.

// expandProfiles expands every profile reference of the loaded katalog, once
// every file (and with it every defined profile) is read.
func (l *loader) expandProfiles() {
	for _, e := range l.k.CRDs {
		d := l.decoder(e.Pos.File)
		d.entry, d.owner = e.Name, e
		if e.reconcilerProfile != nil {
			l.reconcilerProfile(d, e)
		}
		if e.Box == nil {
			continue
		}
		for _, h := range Hooks {
			if hook := e.Box.Hooks[h]; hook != nil {
				for _, r := range hook.Resources {
					l.expandResource(d, r)
				}
			}
		}
	}
}

func (l *loader) expandResource(d *decoder, r *Resource) {
	path := r.path
	for _, key := range []string{"resources", "securityContext", "rollingUpdate"} {
		class := map[string]string{"resources": "resources", "securityContext": "containerSecurity", "rollingUpdate": "rollingUpdate"}[key]
		if e := r.Fields.Entry(key); e != nil {
			if v, ok := l.profiledBlock(d, r, classOf(class), e.Value, path+"."+key, nil); ok {
				e.Value = v
			}
		}
	}
	if e := r.Fields.Entry("podSecurity"); e != nil {
		if prev := r.Fields.Entry("podSecurityContext"); prev != nil {
			d.errorAt(e.KeyPos, path+".podSecurity", "podSecurity is upstream's name for podSecurityContext, which is also set at %s; keep one", prev.KeyPos)
		} else if v, ok := l.profiledBlock(d, r, classOf("podSecurity"), e.Value, path+".podSecurity", nil); ok {
			e.Key, e.Value = "podSecurityContext", v
		}
	}
	if e := r.Fields.Entry("probes"); e != nil {
		l.probes(d, r, e, path+".probes")
	}
	switch r.Kind {
	case "pdb":
		l.pdbBehavior(d, r, path)
	case "hpa":
		l.hpaBehavior(d, r, path)
	case "networkPolicies":
		l.topProfile(d, r, classOf("networkPolicies"), []string{"ingress", "egress", "policyTypes"}, path)
		if pe := r.Fields.Entry("profile"); pe != nil {
			// A defined profile's podSelector applies where the
			// declaration writes none.
			if r.Fields.Get("podSelector") == nil {
				l.setFromProfile(d, r, classOf("networkPolicies"), pe, "podSelector", path)
			}
			r.Fields.Map = slices.DeleteFunc(r.Fields.Map, func(x *MapEntry) bool { return x == pe })
		}
	case "resourceQuotas":
		l.topProfile(d, r, classOf("resourceQuotas"), []string{"hard"}, path)
		removeField(r, "profile")
	case "limitRanges":
		l.topProfile(d, r, classOf("limitRanges"), []string{"limits"}, path)
		removeField(r, "profile")
	}
}

func removeField(r *Resource, key string) {
	r.Fields.Map = slices.DeleteFunc(r.Fields.Map, func(e *MapEntry) bool { return e.Key == key })
}

// profileValue is what a profile reference stands for, through expand (nil
// from expand: the field stays unset): for a literal name the named
// profile's; for an expression a selection among every profile of the
// class. ok is false when the reference is in error (reported).
func (l *loader) profileValue(d *decoder, r *Resource, c *profileClass, name *Value, field string, expand func(*Value) *Value) (*Value, bool) {
	if name != nil && name.Kind == StringValue && r != nil {
		// A motif's profile named by an input bound to a literal is that
		// literal.
		if lit, ok := r.Motif.literalInput(name.Str); ok {
			name = &Value{Kind: StringValue, Str: lit, Scalar: lit, Pos: name.Pos}
		}
	}
	if name == nil || name.Kind != StringValue {
		d.errorAt(name.Pos, field, "a %s is named by a string, got %s", c.What, name.Kind)
		return nil, false
	}
	if !isExpression(name.Str) {
		fields, ok := l.profileLookup(c, name.Str, name.Pos)
		if !ok {
			d.errorAt(name.Pos, field, "%s", l.unknownProfile(c, name.Str))
			return nil, false
		}
		return expand(fields), true
	}
	cases := l.profileCases(c, name.Pos, expand)
	if len(cases) == 0 {
		d.errorAt(name.Pos, field, "no %s exists for the expression to name; define them under profiles.%s", c.What, c.Key)
		return nil, false
	}
	return &Value{Kind: SelectValue, Pos: name.Pos, Select: &Selection{Key: name, What: c.What, Cases: cases}}, true
}

// isExpression reports a CEL or legacy template string.
func isExpression(s string) bool {
	return strings.Contains(s, "${") || strings.Contains(s, "{{")
}

// profiledBlock expands a block written `{profile: NAME}` into the profile's
// fields (through expand when not nil); a block without profile is kept.
// ok is false when v needs no change or is in error.
func (l *loader) profiledBlock(d *decoder, r *Resource, c *profileClass, v *Value, field string, expand func(*Value) *Value) (*Value, bool) {
	name := v.Get("profile")
	if name == nil {
		return nil, false
	}
	for _, e := range v.Map {
		if e.Key != "profile" {
			d.errorAt(e.KeyPos, field+"."+e.Key, "%s.profile stands for the %s's fields; write the profile or the fields, not both (or define a profile of your own under profiles.%s)", lastSegment(field), c.What, c.Key)
			return nil, false
		}
	}
	if expand == nil {
		expand = func(f *Value) *Value { return f }
	}
	return l.profileValue(d, r, c, name, field+".profile", expand)
}

func lastSegment(field string) string {
	for i := len(field) - 1; i >= 0; i-- {
		if field[i] == '.' {
			return field[i+1:]
		}
	}
	return field
}

// topProfile expands a kind's own `profile:` (networkPolicies,
// resourceQuotas, limitRanges) into keys; writing one of them beside the
// profile is an error.
func (l *loader) topProfile(d *decoder, r *Resource, c *profileClass, keys []string, path string) {
	pe := r.Fields.Entry("profile")
	if pe == nil {
		return
	}
	for _, k := range keys {
		if e := r.Fields.Entry(k); e != nil {
			d.errorAt(e.KeyPos, path+"."+k, "profile %s stands for %s; write the profile or the rules, not both (or define a profile of your own under profiles.%s)", pe.Value.Str, k, c.Key)
			return
		}
	}
	for _, k := range keys {
		l.setFromProfile(d, r, c, pe, k, path)
	}
}

// setFromProfile sets field key of r to what the profile named by pe holds
// there (nothing when it holds none).
func (l *loader) setFromProfile(d *decoder, r *Resource, c *profileClass, pe *MapEntry, key, path string) bool {
	v, ok := l.profileValue(d, r, c, pe.Value, path+".profile", func(f *Value) *Value { return f.Get(key) })
	if !ok {
		return false
	}
	if v != nil {
		r.Fields.Map = append(r.Fields.Map, &MapEntry{Key: key, KeyPos: pe.KeyPos, Value: v})
	}
	return true
}

// pdbBehavior: behavior: {profile} stands for minAvailable or
// maxUnavailable; behavior: {minAvailable | maxUnavailable} is another
// place to write them.
func (l *loader) pdbBehavior(d *decoder, r *Resource, path string) {
	be := r.Fields.Entry("behavior")
	if be == nil {
		return
	}
	removeField(r, "behavior")
	keys := []string{"minAvailable", "maxUnavailable"}
	b := be.Value
	if b.Kind != MapValue {
		d.errorAt(b.Pos, path+".behavior", "behavior is {profile: …}, or minAvailable or maxUnavailable; got %s", b.Kind)
		return
	}
	for _, e := range b.Map {
		if e.Key != "profile" && !slices.Contains(keys, e.Key) {
			d.errorAt(e.KeyPos, path+".behavior."+e.Key, "unknown key %q of a PodDisruptionBudget's behavior%s", e.Key, DidYouMean(e.Key, append([]string{"profile"}, keys...)))
			return
		}
	}
	pe := b.Entry("profile")
	for _, k := range keys {
		top, in := r.Fields.Entry(k), b.Entry(k)
		switch {
		case pe != nil && (top != nil || in != nil):
			at := top
			if at == nil {
				at = in
			}
			d.errorAt(at.KeyPos, path+"."+k, "behavior.profile sets the disruption budget; write the profile or %s, not both", k)
			return
		case top != nil && in != nil:
			d.errorAt(in.KeyPos, path+".behavior."+k, "%s is also set at %s; keep one", k, top.KeyPos)
			return
		case in != nil:
			r.Fields.Map = append(r.Fields.Map, in)
		}
	}
	if pe != nil {
		for _, k := range keys {
			if !l.setFromProfile(d, r, classOf("pdb"), pe, k, path+".behavior") {
				return
			}
		}
	}
}

// hpaBehavior: behavior: {profile} stands for the scaling behavior and,
// unless targetCPUUtilizationPercentage is set, the CPU target. Of a
// profile the katalog defines, only these two apply (as upstream).
func (l *loader) hpaBehavior(d *decoder, r *Resource, path string) {
	be := r.Fields.Entry("behavior")
	if be == nil || be.Value.Get("profile") == nil {
		return
	}
	v, ok := l.profiledBlock(d, r, classOf("hpa"), be.Value, path+".behavior", func(f *Value) *Value { return f.Get("behavior") })
	if !ok {
		return
	}
	pe := be.Value.Entry("profile")
	if v == nil {
		removeField(r, "behavior")
	} else {
		be.Value = v
	}
	if r.Fields.Get("targetCPUUtilizationPercentage") == nil {
		l.setFromProfile(d, r, classOf("hpa"), pe, "targetCPUUtilizationPercentage", path+".behavior")
	}
	if p := l.profiles["hpa"][pe.Value.Str]; p != nil {
		for _, k := range []string{"minReplicas", "maxReplicas"} {
			if e := p.Fields.Entry(k); e != nil {
				d.warnAt(e.KeyPos, path+".behavior.profile", "%s of hpa profile %q is not applied (a profile sets an autoscaler's behavior and CPU target, as upstream); set %s on the autoscaler", k, p.Name, k)
			}
		}
	}
}

// reconcilerProfile applies operatorBox.reconciler.profile: its workers,
// resync and queue depth where the entry does not set them (upstream:
// inline settings override the profile).
func (l *loader) reconcilerProfile(d *decoder, e *CRDEntry) {
	name, field := e.reconcilerProfile, e.reconcilerProfilePath
	if name.Kind != StringValue || isExpression(name.Str) {
		d.errorAt(name.Pos, field, "a reconciler profile sets workers and resync when the operator starts, so it is named by a literal, not an expression")
		return
	}
	c := classOf("reconciler")
	fields, ok := l.profileLookup(c, name.Str, name.Pos)
	if !ok {
		d.errorAt(name.Pos, field, "%s", l.unknownProfile(c, name.Str))
		return
	}
	if w := fields.Get("workers"); w != nil && e.WorkersPos.IsZero() {
		if n, ok := w.Scalar.(int64); ok && n >= 1 {
			e.Workers, e.WorkersPos = int(n), w.Pos
		} else {
			d.errorAt(w.Pos, field, "reconciler profile %q: workers must be an integer of at least 1, got %q", name.Str, w.Str)
		}
	}
	if r := fields.Get("resync"); r != nil && e.ResyncPos.IsZero() {
		dur, err := ParseDuration(r.Str)
		if err != nil {
			d.errorAt(r.Pos, field, "reconciler profile %q: %v", name.Str, err)
		} else {
			e.Resync, e.ResyncPos = dur, r.Pos
		}
	}
	if q := fields.Get("queue").Get("maxDepth"); q != nil {
		n, ok := q.Scalar.(int64)
		switch {
		case !ok || n < 1:
			d.errorAt(q.Pos, field, "reconciler profile %q: queue.maxDepth must be an integer of at least 1, got %q", name.Str, q.Str)
		case e.Queue == nil:
			e.Queue = &Queue{Pos: q.Pos, MaxDepth: int(n)}
		case e.Queue.MaxDepth == 0:
			e.Queue.MaxDepth = int(n)
		}
	}
}

// probes expands upstream's probes: {liveness, readiness, startup} into the
// container's three probes.
func (l *loader) probes(d *decoder, r *Resource, pe *MapEntry, path string) {
	removeField(r, "probes")
	if pe.Value.Kind != MapValue {
		d.errorAt(pe.Value.Pos, path, "probes is a map of liveness, readiness and startup; got %s", pe.Value.Kind)
		return
	}
	for _, e := range pe.Value.Map {
		target := map[string]string{"liveness": "livenessProbe", "readiness": "readinessProbe", "startup": "startupProbe"}[e.Key]
		ppath := path + "." + e.Key
		switch {
		case target == "":
			d.errorAt(e.KeyPos, ppath, "unknown probe %q%s", e.Key, DidYouMean(e.Key, []string{"liveness", "readiness", "startup"}))
			continue
		case r.Fields.Entry(target) != nil:
			d.errorAt(e.KeyPos, ppath, "the %s probe is also written as %s at %s; keep one", e.Key, target, r.Fields.Entry(target).KeyPos)
			continue
		}
		if v, ok := l.probe(d, r, e.Value, ppath); ok {
			r.Fields.Map = append(r.Fields.Map, &MapEntry{Key: target, KeyPos: e.KeyPos, Value: v})
		}
	}
}

var probeKeys = append([]string{"type", "path", "port", "command", "host", "scheme", "service", "profile"}, probeTimingKeys...)

// probe builds one Kubernetes probe from upstream's shorthand: the check
// (type http, tcp, exec or grpc; port default the workload's port) and its
// timing (a profile, the timing fields, else the standard profile).
func (l *loader) probe(d *decoder, r *Resource, cfg *Value, path string) (*Value, bool) {
	if cfg.Kind != MapValue {
		d.errorAt(cfg.Pos, path, "a probe is a map (type, path, port, command, profile, …); got %s", cfg.Kind)
		return nil, false
	}
	for _, e := range cfg.Map {
		if !slices.Contains(probeKeys, e.Key) {
			d.errorAt(e.KeyPos, path+"."+e.Key, "unknown probe field %q%s", e.Key, DidYouMean(e.Key, probeKeys))
			return nil, false
		}
	}
	typ := "http"
	switch t := cfg.Get("type"); {
	case t != nil:
		typ = t.Str
	case cfg.Get("command") != nil:
		typ = "exec"
	}
	port := cfg.Get("port")
	if port == nil {
		port = r.Fields.Get("port")
	}
	check := &Value{Kind: MapValue, Pos: cfg.Pos}
	add := func(m *Value, key string, v *Value) {
		if v != nil {
			m.Map = append(m.Map, &MapEntry{Key: key, KeyPos: v.Pos, Value: v})
		}
	}
	needPort := func() bool {
		if port == nil {
			d.errorAt(cfg.Pos, path+".port", "a %s probe needs port: (the workload declares no port)", typ)
			return false
		}
		return true
	}
	action := &Value{Kind: MapValue, Pos: cfg.Pos}
	switch typ {
	case "http":
		if !needPort() {
			return nil, false
		}
		p := cfg.Get("path")
		if p == nil {
			p = literalValue("/", cfg.Pos)
		}
		add(action, "path", p)
		add(action, "port", port)
		add(action, "host", cfg.Get("host"))
		add(action, "scheme", cfg.Get("scheme"))
		add(check, "httpGet", action)
	case "tcp":
		if !needPort() {
			return nil, false
		}
		add(action, "port", port)
		add(action, "host", cfg.Get("host"))
		add(check, "tcpSocket", action)
	case "grpc":
		if !needPort() {
			return nil, false
		}
		add(action, "port", port)
		add(action, "service", cfg.Get("service"))
		add(check, "grpc", action)
	case "exec":
		if cfg.Get("command") == nil {
			d.errorAt(cfg.Pos, path+".command", "an exec probe needs command:")
			return nil, false
		}
		add(action, "command", cfg.Get("command"))
		add(check, "exec", action)
	default:
		d.errorAt(cfg.Get("type").Pos, path+".type", "unknown probe type %q; one of http, tcp, exec, grpc", typ)
		return nil, false
	}
	var timing []*MapEntry
	for _, k := range probeTimingKeys {
		if e := cfg.Entry(k); e != nil {
			timing = append(timing, e)
		}
	}
	withTiming := func(t *Value) *Value {
		out := &Value{Kind: MapValue, Pos: check.Pos, Map: append([]*MapEntry{}, check.Map...)}
		out.Map = append(out.Map, t.Map...)
		return out
	}
	name := cfg.Get("profile")
	switch {
	case name != nil && len(timing) > 0:
		d.errorAt(timing[0].KeyPos, path+"."+timing[0].Key, "the probe's profile sets its timing; write the profile or %s, not both", timing[0].Key)
		return nil, false
	case len(timing) > 0:
		return withTiming(&Value{Kind: MapValue, Map: timing}), true
	case name == nil:
		name = literalValue(defaultProbeProfile, cfg.Pos)
	}
	return l.profileValue(d, r, classOf("probes"), name, path+".profile", withTiming)
}
