package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// AnnotationRules records on a CRD the validation rules a katalog put in
// it, by version: {"v1": ["rule", …]}. Server-side apply cannot say who
// owns one rule (a CRD's spec.versions is an atomic list: whoever writes it
// owns all of it), so this annotation does. `orkestra manifests` and `dev`
// write it with the CRD; `run` and `dev`, at every start, make the rules it
// lists exactly the katalog's: a rule listed that the katalog no longer
// declares is removed, a rule not listed (added by hand, by another tool,
// or in the CRD manifest's own x-kubernetes-validations) is never touched.
const AnnotationRules = "orkestra.orkspace.io/validation-rules"

// RuleChange is a CRD validation rule ApplyCRDRules applied or removed.
type RuleChange struct{ CRD, Version, Rule string }

func (r RuleChange) String() string {
	return fmt.Sprintf("%s %s x-kubernetes-validations %q", r.CRD, r.Version, r.Rule)
}

// katalogRules are the plan's rules for crd, by version.
func katalogRules(plan *engine.Plan, crd *katalog.CRD) map[string]apiextensionsv1.ValidationRules {
	out := map[string]apiextensionsv1.ValidationRules{}
	for _, v := range crd.Object.Spec.Versions {
		if rules := CRDRules(plan, crd, v.Name); len(rules) > 0 {
			out[v.Name] = rules
		}
	}
	return out
}

// RulesAnnotation is the value of AnnotationRules for the plan's rules on
// crd; "" when it has none.
func RulesAnnotation(plan *engine.Plan, crd *katalog.CRD) string {
	return rulesAnnotation(katalogRules(plan, crd))
}

func rulesAnnotation(want map[string]apiextensionsv1.ValidationRules) string {
	if len(want) == 0 {
		return ""
	}
	byVersion := map[string][]string{}
	for v, rules := range want {
		for _, r := range rules {
			byVersion[v] = append(byVersion[v], r.Rule)
		}
	}
	b, _ := json.Marshal(byVersion) // strings only; keys sorted
	return string(b)
}

// ApplyCRDRules makes the rules of the plan's installed CRDs that
// AnnotationRules lists exactly the plan's, and the annotation list them.
// It returns the rules applied and the rules removed.
func ApplyCRDRules(ctx context.Context, c client.Client, plan *engine.Plan) (applied, removed []RuleChange, err error) {
	var seen []*katalog.CRD
	for _, e := range plan.Entries {
		src := e.Source.CRD
		if src == nil || !src.Installable() || !src.Typed() || slices.Contains(seen, src) {
			continue
		}
		seen = append(seen, src)
		want := katalogRules(plan, src)
		var r []RuleChange
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var err error
			r, err = applyCRDRules(ctx, c, src, want)
			return err
		})
		if err != nil {
			return applied, removed, err
		}
		removed = append(removed, r...)
		for _, v := range sortedKeys(want) {
			for _, rule := range want[v] {
				applied = append(applied, RuleChange{CRD: src.Object.Name, Version: v, Rule: rule.Rule})
			}
		}
	}
	return applied, removed, nil
}

func applyCRDRules(ctx context.Context, c client.Client, src *katalog.CRD, want map[string]apiextensionsv1.ValidationRules) ([]RuleChange, error) {
	name := src.Object.Name
	live := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
		if apierrors.IsNotFound(err) && len(want) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("reading CRD %s (from %s), which carries the katalog's validation rules: %w", name, src.Path, err)
	}
	converged, removed, err := Converge(live, want)
	if err != nil {
		return nil, fmt.Errorf("%w; install the CRD of %s (orkestra manifests)", err, src.Path)
	}
	if equality.Semantic.DeepEqual(live, converged) {
		return nil, nil
	}
	patch := client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{})
	if err := c.Patch(ctx, converged, patch, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) {
			return nil, err // read again and retry
		}
		return nil, fmt.Errorf("writing the katalog's validation rules to CRD %s: %w", name, err)
	}
	return removed, nil
}

// Converge returns a copy of live whose rules listed in AnnotationRules are
// exactly want (by version: a listed rule want lacks is removed, a rule of
// want is added or, when live has a rule of the same expression, takes
// want's message and field path) and whose annotation lists want; and the
// rules it removed.
func Converge(live *apiextensionsv1.CustomResourceDefinition, want map[string]apiextensionsv1.ValidationRules) (*apiextensionsv1.CustomResourceDefinition, []RuleChange, error) {
	var ours map[string][]string
	if a := live.Annotations[AnnotationRules]; a != "" {
		if err := json.Unmarshal([]byte(a), &ours); err != nil {
			return nil, nil, fmt.Errorf("CRD %s: annotation %s is not a JSON object of rule lists by version (%w); remove it, and the rules it listed the katalog no longer declares", live.Name, AnnotationRules, err)
		}
	}
	out := live.DeepCopy()
	var removed []RuleChange
	found := map[string]bool{}
	for i := range out.Spec.Versions {
		v := &out.Spec.Versions[i]
		rules, wanted := want[v.Name]
		found[v.Name] = true
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			if wanted {
				return nil, nil, fmt.Errorf("CRD %s installed in the cluster has no schema for version %s, which the katalog's rules validate", live.Name, v.Name)
			}
			continue
		}
		s := v.Schema.OpenAPIV3Schema
		s.XValidations = slices.DeleteFunc(s.XValidations, func(r apiextensionsv1.ValidationRule) bool {
			gone := slices.Contains(ours[v.Name], r.Rule) && !slices.ContainsFunc(rules, func(w apiextensionsv1.ValidationRule) bool { return w.Rule == r.Rule })
			if gone {
				removed = append(removed, RuleChange{CRD: live.Name, Version: v.Name, Rule: r.Rule})
			}
			return gone
		})
		for _, w := range rules {
			if i := slices.IndexFunc(s.XValidations, func(r apiextensionsv1.ValidationRule) bool { return r.Rule == w.Rule }); i >= 0 {
				s.XValidations[i] = w
			} else {
				s.XValidations = append(s.XValidations, w)
			}
		}
		if len(s.XValidations) == 0 {
			s.XValidations = nil
		}
	}
	for _, v := range sortedKeys(want) {
		if !found[v] {
			return nil, nil, fmt.Errorf("CRD %s installed in the cluster has no version %s, which the katalog's rules validate", live.Name, v)
		}
	}
	if a := rulesAnnotation(want); a != "" {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnotationRules] = a
	} else {
		delete(out.Annotations, AnnotationRules)
	}
	return out, removed, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
