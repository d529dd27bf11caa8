package katalog

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// kindRe is what a Kubernetes kind looks like.
var kindRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// checkCustomType validates the literal apiVersion and kind of a custom
// child: a wildcard or malformed value would otherwise reach the RBAC rules
// `orkestra manifests` derives from them (apiGroups: ["*"]). Computed values
// are checked by the API server when the child is applied.
func (d *decoder) checkCustomType(r *Resource, path string) {
	if v := r.Fields.Get("apiVersion"); isLiteral(v) {
		if msg := invalidAPIVersion(v.Str); msg != "" {
			d.errorAt(v.ContentPos(), path+".apiVersion", "apiVersion %q %s", v.Str, msg)
		}
	}
	if v := r.Fields.Get("kind"); isLiteral(v) && !kindRe.MatchString(v.Str) {
		d.errorAt(v.ContentPos(), path+".kind", "kind %q is not a Kubernetes kind: write one kind, letters and digits starting with a letter, e.g. Widget%s", v.Str, wildcardHint(v.Str))
	}
}

func isLiteral(v *Value) bool {
	return v != nil && v.Kind == StringValue && !strings.Contains(v.Str, "${") && !strings.Contains(v.Str, "{{")
}

func invalidAPIVersion(s string) string {
	gv, err := schema.ParseGroupVersion(s)
	if err != nil || gv.Version == "" {
		return "is not GROUP/VERSION (or VERSION for the core group), e.g. example.com/v1" + wildcardHint(s)
	}
	if gv.Group != "" {
		if errs := validation.IsDNS1123Subdomain(gv.Group); len(errs) > 0 {
			return fmt.Sprintf("has an invalid group %q: %s%s", gv.Group, strings.Join(errs, "; "), wildcardHint(gv.Group))
		}
	}
	if errs := validation.IsDNS1123Label(gv.Version); len(errs) > 0 {
		return fmt.Sprintf("has an invalid version %q: %s%s", gv.Version, strings.Join(errs, "; "), wildcardHint(gv.Version))
	}
	return ""
}

func wildcardHint(s string) string {
	if strings.Contains(s, "*") {
		return " (a wildcard names no kind: a child is one object of one kind, and RBAC would grant every group)"
	}
	return ""
}
