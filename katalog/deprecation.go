package katalog

import (
	"fmt"
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
