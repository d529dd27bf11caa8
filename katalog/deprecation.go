package katalog

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// maxDeprecationWarning is the API server's limit on a version's
// deprecationWarning.
const maxDeprecationWarning = 256

// deprecation decodes an entry's `deprecated` and `deprecationWarning`,
// checking the warning by the rules the API server applies to the CRD, so
// that a bad one is a load error with a position rather than a rejected
// install.
func (d *decoder) deprecation(e *CRDEntry, o object) {
	if o.has("deprecated") {
		e.Deprecated = d.boolean(o["deprecated"].value, "deprecated")
		e.DeprecationPos = d.pos(o["deprecated"].key)
	}
	f, ok := o["deprecationWarning"]
	if !ok {
		return
	}
	w := d.str(f.value, "deprecationWarning")
	if !e.Deprecated {
		d.errorf(f.key, "deprecationWarning", "deprecationWarning needs deprecated: true on the same entry (the API server accepts a warning only for a deprecated version)")
		return
	}
	if msg := checkDeprecationWarning(w); msg != "" {
		d.errorf(f.value, "deprecationWarning", "%s", msg)
		return
	}
	e.DeprecationWarning = &w
}

func checkDeprecationWarning(w string) string {
	switch {
	case w == "":
		return "deprecationWarning is empty; write the text clients should see, or remove the key for the API server's default warning"
	case len(w) > maxDeprecationWarning:
		return fmt.Sprintf("deprecationWarning is %d bytes long; the API server allows at most %d", len(w), maxDeprecationWarning)
	case !utf8.ValidString(w):
		return "deprecationWarning is not valid UTF-8"
	}
	for i, r := range w {
		if !unicode.IsPrint(r) || unicode.IsControl(r) {
			return fmt.Sprintf("deprecationWarning holds a non-printable character at byte %d (%U); the API server allows printable characters only", i, r)
		}
	}
	return ""
}

// Deprecation returns how the katalog marks version of crd: an entry at
// that version with `deprecated: true` marks it (with its warning, when
// given); otherwise the manifest's own values stand.
func (k *Katalog) Deprecation(crd *CRD, version string) (deprecated bool, warning *string) {
	for _, v := range crd.Object.Spec.Versions {
		if v.Name == version {
			deprecated, warning = v.Deprecated, v.DeprecationWarning
		}
	}
	for _, e := range k.CRDs {
		if d := e.patternDeprecation(time.Now()); e.CRD == crd && d != nil {
			deprecated = true
			if checkDeprecationWarning(d.Message) == "" {
				warning = &d.Message
			}
		}
	}
	for _, e := range k.CRDs {
		if e.CRD == crd && e.APITypes.Version == version && e.Deprecated {
			deprecated = true
			if e.DeprecationWarning != nil {
				warning = e.DeprecationWarning
			}
		}
	}
	return deprecated, warning
}

// ApplyDeprecations sets, on spec (a copy of crd's), every version's
// deprecated and deprecationWarning as the katalog marks them.
func (k *Katalog) ApplyDeprecations(crd *CRD, spec *apiextensionsv1.CustomResourceDefinitionSpec) {
	for i := range spec.Versions {
		v := &spec.Versions[i]
		v.Deprecated, v.DeprecationWarning = k.Deprecation(crd, v.Name)
	}
}

// Keys of an entry's lifecycle: (upstream v0.7.16/v0.7.18).
var (
	lifecycleKeys   = []string{"maturity", "deprecation", "compatibility"}
	deprecationKeys = []string{"message", "migratedTo", "timeline", "accept"}
	maturities      = []string{"alpha", "beta", "stable", "deprecated"}
)

// lifecycle decodes an entry's lifecycle: into the deprecation the entry's
// deprecated/deprecationWarning keys declare: maturity: deprecated, or a
// deprecation block, marks the entry's version deprecated, with
// deprecation.message as its warning. The rest is upstream's registry
// bookkeeping, which reaches no cluster here.
func (d *decoder) lifecycle(e *CRDEntry, o object) {
	f, ok := o["lifecycle"]
	if !ok {
		return
	}
	lo := d.mapping(f.value, "lifecycle", lifecycleKeys, nil)
	maturity := ""
	if m, ok := lo["maturity"]; ok {
		maturity = d.str(m.value, "lifecycle.maturity")
		if !contains(maturities, maturity) {
			d.errorf(m.value, "lifecycle.maturity", "maturity must be one of %v, got %q%s", maturities, maturity, DidYouMean(maturity, maturities))
			return
		}
	}
	if c, ok := lo["compatibility"]; ok {
		d.warnf(c.key, "lifecycle.compatibility", "compatibility names upstream releases and Kubernetes versions for its registry; this runtime does not check it")
	}
	dep, hasDep := lo["deprecation"]
	if maturity != "deprecated" && !hasDep {
		return
	}
	if hasDep && maturity != "" && maturity != "deprecated" {
		d.errorf(dep.key, "lifecycle.deprecation", "a deprecation with maturity: %s; a deprecated entry has maturity: deprecated (or none)", maturity)
		return
	}
	if !e.DeprecationPos.IsZero() {
		d.errorf(f.key, "lifecycle", "deprecation is already declared by deprecated: at %s; keep one (lifecycle is the newer layout)", e.DeprecationPos)
		return
	}
	e.Deprecated, e.DeprecationPos = true, d.pos(f.key)
	if !hasDep {
		return
	}
	do := d.mapping(dep.value, "lifecycle.deprecation", deprecationKeys, nil)
	if m, ok := do["message"]; ok {
		w := d.str(m.value, "lifecycle.deprecation.message")
		if msg := checkDeprecationWarning(w); msg != "" {
			d.errorf(m.value, "lifecycle.deprecation.message", "%s", strings.ReplaceAll(msg, "deprecationWarning", "the deprecation message"))
		} else {
			e.DeprecationWarning = &w
		}
	}
	for _, k := range []string{"migratedTo", "timeline", "accept"} {
		if g, ok := do[k]; ok {
			d.warnf(g.key, "lifecycle.deprecation."+k, "%s is upstream's registry bookkeeping for consumers of a deprecated pattern; here the version is marked deprecated in its CRD (clients get the warning) and %s changes nothing else", k, k)
		}
	}
}
