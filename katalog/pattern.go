package katalog

import (
	"fmt"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"gopkg.in/yaml.v3"
)

// A katalog's top-level lifecycle: is upstream's registry lifecycle of the
// whole pattern (orkspace/orkestra pkg/katalog/validate/lifecycle.go and
// pkg/katalog/deprecation_policy.go). A deprecated katalog does not start
// when run directly: a Komposer that imports it must accept it under its
// own lifecycle.accept.patterns (or, in upstream's earlier form, the
// katalog's deprecation.accept acknowledges it). A katalog that runs
// deprecated marks its CRDs' versions deprecated, so that every client
// gets the message as the API server's Warning.
var (
	patternLifecycleKeys   = []string{"maturity", "deprecation", "compatibility", "accept"}
	patternDeprecationKeys = []string{"message", "migratedTo", "timeline", "accept"}
	timelineKeys           = []string{"from", "to"}
	ownAcceptKeys          = []string{"beforeEol", "eol"}
	compatibilityKeys      = []string{"kubernetes", "orkestra"}
	acceptKeys             = []string{"patterns"}
	acceptPatternKeys      = []string{"name", "author", "version"}
)

// Pattern is a Katalog or Komposer document that declares a lifecycle:, as
// upstream's registry names it (metadata.name, author, version).
type Pattern struct {
	Name, Author, Version string
	File                  string
	// Pos is the lifecycle: key's.
	Pos      Pos
	Maturity string
	// Deprecation is nil when the pattern is not deprecated.
	Deprecation *PatternDeprecation
	// Accept lists the deprecated patterns this Komposer runs.
	Accept []AcceptPattern
}

// PatternDeprecation is lifecycle.deprecation.
type PatternDeprecation struct {
	Message, MigratedTo string
	// From and To bound the deprecation window (zero: not given): before
	// From the pattern is not deprecated yet, from To on it is past its end
	// of life.
	From, To time.Time
	// AcceptBeforeEOL and AcceptEOL are the katalog's own acknowledgement
	// (deprecation.accept.beforeEol / eol, upstream's earlier form).
	AcceptBeforeEOL, AcceptEOL bool
	Pos                        Pos
}

// AcceptPattern is one entry of a Komposer's lifecycle.accept.patterns.
type AcceptPattern struct {
	Name, Author string
	// Version, when set, must hold for the pattern's metadata.version.
	Version *semver.Constraints
	Pos     Pos
}

// Deprecation states of a pattern at a time.
const (
	DeprecationNone    = "none"
	DeprecationWarning = "deprecated"
	DeprecationEOL     = "end-of-life"
)

// State is the pattern's deprecation state at now.
func (d *PatternDeprecation) State(now time.Time) string {
	switch {
	case d == nil || !d.From.IsZero() && now.Before(d.From):
		return DeprecationNone
	case !d.To.IsZero() && !now.Before(d.To):
		return DeprecationEOL
	}
	return DeprecationWarning
}

// patternLifecycle decodes a document's top-level lifecycle:.
func (d *decoder) patternLifecycle(f field, meta object, komposer bool) *Pattern {
	lo := d.mapping(f.value, "lifecycle", patternLifecycleKeys, nil)
	p := &Pattern{File: d.file, Pos: d.pos(f.key),
		Name: d.str(meta["name"].value, "metadata.name"), Author: d.str(meta["author"].value, "metadata.author"), Version: d.str(meta["version"].value, "metadata.version")}
	if m, ok := lo["maturity"]; ok {
		p.Maturity = d.str(m.value, "lifecycle.maturity")
		switch p.Maturity {
		case "alpha":
			d.warnf(m.value, "lifecycle.maturity", "maturity is alpha: this pattern is experimental and not recommended for production (as upstream warns)")
		case "beta":
			d.warnf(m.value, "lifecycle.maturity", "maturity is beta: this pattern is stabilising; its API may still change (as upstream warns)")
		case "stable":
		case "deprecated":
			if !lo.has("deprecation") {
				d.warnf(m.value, "lifecycle.maturity", "maturity is deprecated but lifecycle.deprecation is not set, so the katalog starts as any other (as upstream); add deprecation: {message: …} to deprecate it, or remove the maturity")
			}
		default:
			d.errorf(m.value, "lifecycle.maturity", "maturity must be one of %v, got %q%s", maturities, p.Maturity, DidYouMean(p.Maturity, maturities))
		}
	}
	if c, ok := lo["compatibility"]; ok {
		co := d.mapping(c.value, "lifecycle.compatibility", compatibilityKeys, nil)
		for _, k := range compatibilityKeys {
			if v, ok := co[k]; ok {
				d.semverRange(v.value, "lifecycle.compatibility."+k)
			}
		}
	}
	if dep, ok := lo["deprecation"]; ok {
		p.Deprecation = d.patternDeprecation(dep)
	}
	if a, ok := lo["accept"]; ok {
		if !komposer {
			d.errorf(a.key, "lifecycle.accept", "lifecycle.accept is only valid in a Komposer (as upstream): a Komposer that imports a deprecated katalog accepts it by name; move it to the komposer that imports this katalog")
		} else {
			p.Accept = d.acceptPatterns(a.value)
		}
	}
	return p
}

func (d *decoder) patternDeprecation(f field) *PatternDeprecation {
	path := "lifecycle.deprecation"
	do := d.mapping(f.value, path, patternDeprecationKeys, nil)
	dep := &PatternDeprecation{Pos: d.pos(f.key), Message: d.str(do["message"].value, path+".message"), MigratedTo: d.str(do["migratedTo"].value, path+".migratedTo")}
	if strings.TrimSpace(dep.Message) == "" {
		d.errorf(f.key, path+".message", "a deprecation needs message: (what its users should do instead), as upstream requires")
	}
	if t, ok := do["timeline"]; ok {
		to := d.mapping(t.value, path+".timeline", timelineKeys, nil)
		dep.From = d.date(to["from"], path+".timeline.from")
		dep.To = d.date(to["to"], path+".timeline.to")
		if !dep.From.IsZero() && !dep.To.IsZero() && !dep.From.Before(dep.To) {
			d.errorf(t.key, path+".timeline", "from (%s) must be before to (%s)", dep.From.Format(time.DateOnly), dep.To.Format(time.DateOnly))
		}
	}
	if a, ok := do["accept"]; ok {
		ao := d.mapping(a.value, path+".accept", ownAcceptKeys, nil)
		if v, ok := ao["beforeEol"]; ok {
			dep.AcceptBeforeEOL = d.boolean(v.value, path+".accept.beforeEol")
		}
		if v, ok := ao["eol"]; ok {
			dep.AcceptEOL = d.boolean(v.value, path+".accept.eol")
			if dep.AcceptEOL && !dep.AcceptBeforeEOL {
				d.errorf(v.key, path+".accept.eol", "eol: true acknowledges the end of life on top of the deprecation; set beforeEol: true as well")
			}
		}
	}
	return dep
}

// date decodes a YYYY-MM-DD date (zero when absent).
func (d *decoder) date(f field, path string) time.Time {
	if f.value == nil {
		return time.Time{}
	}
	s := d.str(f.value, path)
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		d.errorf(f.value, path, "%q is not a date; write YYYY-MM-DD", s)
	}
	return t
}

// semverRange decodes a semantic version range (>=1.28, ^0.7, …).
func (d *decoder) semverRange(n *yaml.Node, path string) *semver.Constraints {
	s := d.str(n, path)
	c, err := semver.NewConstraint(s)
	if err != nil {
		d.errorf(n, path, "%q is not a semantic version range (e.g. \">= 1.28\", \"^0.7\"): %v", s, err)
		return nil
	}
	return c
}

func (d *decoder) acceptPatterns(n *yaml.Node) []AcceptPattern {
	ao := d.mapping(n, "lifecycle.accept", acceptKeys, nil)
	list := Resolve(ao["patterns"].value)
	if list == nil || list.Kind != yaml.SequenceNode {
		d.errorf(orNode(ao["patterns"].value, n), "lifecycle.accept.patterns", "list the deprecated katalogs to run: patterns: [{name: NAME, author: AUTHOR, version: RANGE}]")
		return nil
	}
	var out []AcceptPattern
	for i, item := range list.Content {
		path := fmt.Sprintf("lifecycle.accept.patterns[%d]", i)
		po := d.mapping(item, path, acceptPatternKeys, nil)
		a := AcceptPattern{Name: d.str(po["name"].value, path+".name"), Author: d.str(po["author"].value, path+".author"), Pos: d.pos(Resolve(item))}
		if a.Name == "" {
			d.errorf(item, path+".name", "an accepted pattern needs name: (the deprecated katalog's metadata.name)")
		}
		if v, ok := po["version"]; ok {
			a.Version = d.semverRange(v.value, path+".version")
		}
		out = append(out, a)
	}
	return out
}

// accepts: a matches pattern p (by name, author when given, and version
// range when given).
func (a AcceptPattern) accepts(p *Pattern) bool {
	if a.Name != p.Name || a.Author != "" && a.Author != p.Author {
		return false
	}
	if a.Version == nil {
		return true
	}
	v, err := semver.NewVersion(p.Version)
	return err == nil && a.Version.Check(v)
}

// accepted: a Komposer of the katalog accepts p, or p acknowledges its own
// deprecation in state.
func (k *Katalog) accepted(p *Pattern, state string) bool {
	if d := p.Deprecation; d.AcceptEOL || state == DeprecationWarning && d.AcceptBeforeEOL {
		return true
	}
	for _, q := range k.Patterns {
		for _, a := range q.Accept {
			if a.accepts(p) {
				return true
			}
		}
	}
	return false
}

// StartGate is upstream's start-up deprecation policy: a deprecated
// katalog (or one past its end of life) that nothing accepts does not
// start. It names each such katalog, its message, its end of life and what
// to write to run it.
func (k *Katalog) StartGate(now time.Time) error {
	var msgs []string
	for _, p := range k.Patterns {
		state := p.Deprecation.State(now)
		if state == DeprecationNone || k.accepted(p, state) {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: katalog %q is %s and does not start without an explicit acknowledgement: %s", p.Pos, p.Name, state, p.Deprecation.Message)
		if t := p.Deprecation.To; !t.IsZero() && state == DeprecationWarning {
			fmt.Fprintf(&b, "; end of life in %d days (%s)", int(t.Sub(now).Hours()/24), t.Format(time.DateOnly))
		}
		if state == DeprecationEOL {
			fmt.Fprintf(&b, "; its end of life was %s", p.Deprecation.To.Format(time.DateOnly))
		}
		if p.Deprecation.MigratedTo != "" {
			fmt.Fprintf(&b, "; migrate to %s", p.Deprecation.MigratedTo)
		}
		fmt.Fprintf(&b, ". To run it anyway, import it from a Komposer that accepts it:\n  lifecycle:\n    accept:\n      patterns:\n        - name: %s", p.Name)
		msgs = append(msgs, b.String())
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "\n"))
}

// patternDeprecation is the deprecation of e's katalog in force at now,
// for the CRD versions e declares (nil when there is none).
func (e *CRDEntry) patternDeprecation(now time.Time) *PatternDeprecation {
	if e.Pattern == nil || e.Pattern.Deprecation.State(now) == DeprecationNone {
		return nil
	}
	return e.Pattern.Deprecation
}

// checkPatterns warns, at load, of the deprecated katalogs that would not
// start, and of a deprecation message the API server cannot carry.
func checkPatterns(k *Katalog, diags *Diagnostics, now time.Time) {
	for _, p := range k.Patterns {
		d := p.Deprecation
		if d == nil {
			continue
		}
		if msg := checkDeprecationWarning(d.Message); msg != "" && d.Message != "" {
			*diags = append(*diags, Diagnostic{Pos: d.Pos, Severity: Warning, Field: "lifecycle.deprecation.message",
				Message: strings.ReplaceAll(msg, "deprecationWarning", "the message") + "; the CRD versions of this katalog carry the API server's default deprecation warning instead"})
		}
		if state := d.State(now); state != DeprecationNone && !k.accepted(p, state) {
			*diags = append(*diags, Diagnostic{Pos: p.Pos, Severity: Warning, Field: "lifecycle.deprecation",
				Message: fmt.Sprintf("katalog %q is %s: orkestra run and dev refuse to start it unless a Komposer that imports it accepts it under lifecycle.accept.patterns (name: %s)", p.Name, state, p.Name)})
		}
	}
}
