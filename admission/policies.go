// Package admission turns a katalog's admission rules (engine.Admission, the
// top-level security section) into what the API server runs itself: rules
// on one object's own fields into the CRD's x-kubernetes-validations, the
// rest into ValidatingAdmissionPolicies and MutatingAdmissionPolicies with
// their bindings. No webhook of Orkestra's sits in the request path.
package admission

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// LabelKatalog marks the policies a katalog owns: run and dev remove the
// ones a new revision no longer declares, and never anyone else's.
const LabelKatalog = "orkestra.orkspace.io/katalog"

// CRDRules are the entry rules that run as the CRD's own validation rules
// for one version: deny rules on the object's own fields of entries whose
// CRD the katalog installs.
func CRDRules(plan *engine.Plan, crd *katalog.CRD, version string) apiextensionsv1.ValidationRules {
	var out apiextensionsv1.ValidationRules
	for _, e := range plan.Entries {
		if e.Source.CRD != crd || e.GVK.Version != version || e.Admission == nil {
			continue
		}
		for _, r := range e.Admission.Rules {
			if inCRD(e, r) {
				out = append(out, apiextensionsv1.ValidationRule{Rule: r.Expr, Message: r.Message, FieldPath: r.FieldPath})
			}
		}
	}
	return out
}

// inCRD reports whether a rule runs as a CRD validation rule rather than in
// a policy: a deny rule that reads no request, on a CRD Orkestra installs.
func inCRD(e *engine.Entry, r *engine.AdmissionRule) bool {
	return !r.Warn && !r.ReadsRequest && e.Source.CRD.Installable() && e.Source.CRD.Typed()
}

// Policies returns the admission policies and bindings of a plan, sorted by
// kind and name. Each carries LabelKatalog.
func Policies(plan *engine.Plan) []client.Object {
	name := katalogName(plan)
	var out []client.Object
	for _, e := range plan.Entries {
		if !e.Enabled {
			continue
		}
		out = append(out, entryPolicies(plan, name, e)...)
	}
	if s := plan.Katalog.Security; s != nil && s.DeletionProtection {
		out = append(out, deletionProtection(plan, name)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ka, kb := fmt.Sprintf("%T", a), fmt.Sprintf("%T", b)
		if ka != kb {
			return ka < kb
		}
		return a.GetName() < b.GetName()
	})
	return out
}

// NeedsMutating reports whether the plan declares mutations.
func NeedsMutating(plan *engine.Plan) bool {
	for _, e := range plan.Entries {
		if e.Enabled && e.Admission != nil && len(e.Admission.Mutations) > 0 {
			return true
		}
	}
	return false
}

func entryPolicies(plan *engine.Plan, katalogName string, e *engine.Entry) []client.Object {
	base := dnsName("orkestra-" + katalogName + "-" + e.Name)
	var out []client.Object
	var deny, warn []admissionv1.Validation
	if e.Admission != nil {
		for _, r := range e.Admission.Rules {
			if inCRD(e, r) {
				continue
			}
			v := admissionv1.Validation{Expression: policyExpr(r), Message: r.Message}
			if r.Warn {
				warn = append(warn, v)
			} else {
				deny = append(deny, v)
			}
		}
	}
	if s := plan.Katalog.Security; s != nil && s.NamespaceProtection && e.Source.Namespaces != nil {
		if v, ok := namespaceValidation(e); ok {
			deny = append(deny, v)
		}
	}
	ops := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	for _, p := range []struct {
		suffix string
		vs     []admissionv1.Validation
		action admissionv1.ValidationAction
	}{{"-deny", deny, admissionv1.Deny}, {"-warn", warn, admissionv1.Warn}} {
		if len(p.vs) == 0 {
			continue
		}
		out = append(out, validating(katalogName, base+p.suffix, matchEntry(e, ops), p.vs, p.action)...)
	}
	if e.Admission != nil && len(e.Admission.Mutations) > 0 {
		out = append(out, mutating(katalogName, base+"-mutate", e)...)
	}
	return out
}

func matchEntry(e *engine.Entry, ops []admissionv1.OperationType) *admissionv1.MatchResources {
	equivalent := admissionv1.Equivalent
	return &admissionv1.MatchResources{
		MatchPolicy: &equivalent,
		ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{e.GVK.Group}, APIVersions: []string{e.GVK.Version}, Resources: []string{e.GVR.Resource}},
		}}},
	}
}

func validating(katalogName, name string, match *admissionv1.MatchResources, vs []admissionv1.Validation, action admissionv1.ValidationAction) []client.Object {
	fail := admissionv1.Fail
	p := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: objectMeta(katalogName, name),
		Spec:       admissionv1.ValidatingAdmissionPolicySpec{MatchConstraints: match, Validations: vs, FailurePolicy: &fail},
	}
	b := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: objectMeta(katalogName, name),
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{action}},
	}
	return []client.Object{p, b}
}

func mutating(katalogName, name string, e *engine.Entry) []client.Object {
	fail := admissionv1.Fail
	var ms []admissionv1.Mutation
	for _, m := range e.Admission.Mutations {
		ms = append(ms, admissionv1.Mutation{PatchType: admissionv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionv1.ApplyConfiguration{Expression: applyExpr(m)}})
	}
	p := &admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: objectMeta(katalogName, name),
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   matchEntry(e, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}),
			Mutations:          ms,
			FailurePolicy:      &fail,
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	b := &admissionv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: objectMeta(katalogName, name),
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}
	return []client.Object{p, b}
}

// deletionProtection refuses to delete the katalog's CRDs.
func deletionProtection(plan *engine.Plan, katalogName string) []client.Object {
	var names []string
	for _, e := range plan.Entries {
		if c := e.Source.CRD; c != nil && c.Origin != katalog.BuiltIn && !contains(names, c.Object.Name) {
			names = append(names, c.Object.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	name := dnsName("orkestra-" + katalogName + "-deletion-protection")
	match := &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
		ResourceNames: names,
		RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Delete},
			Rule:       admissionv1.Rule{APIGroups: []string{apiextensionsv1.GroupName}, APIVersions: []string{"v1"}, Resources: []string{"customresourcedefinitions"}},
		},
	}}}
	msg := fmt.Sprintf("the CRD is protected from deletion by katalog %s (security.deletionProtection); remove the protection from the katalog and restart orkestra run, then delete it", katalogName)
	out := validating(katalogName, name, match, []admissionv1.Validation{{Expression: "false", Message: msg}}, admissionv1.Deny)
	return append(out, protectedObjects(plan, katalogName)...)
}

// protectedObjects refuses to delete the katalog's custom resources and
// custom children that carry upstream's deletion-protection label with
// "true" (upstream's second webhook entry, orkspace/orkestra
// pkg/katalog/docs/03-deletion-protection.md): the entries' own resources
// by name, a custom child's group whole (its plural is not known offline),
// both narrowed to labelled objects.
func protectedObjects(plan *engine.Plan, katalogName string) []client.Object {
	byGroup := map[string][]string{}
	add := func(group, resource string) {
		if !contains(byGroup[group], resource) && !contains(byGroup[group], "*") {
			byGroup[group] = append(byGroup[group], resource)
		}
	}
	for _, e := range plan.Entries {
		if c := e.Source.CRD; e.Enabled && c != nil && c.Origin != katalog.BuiltIn {
			add(e.GVK.Group, e.GVR.Resource)
		}
		for _, h := range katalog.Hooks {
			for _, r := range e.Hooks[h] {
				if r.Source.Kind == "custom" && r.GVK != nil {
					byGroup[r.GVK.Group] = []string{"*"}
				}
			}
		}
	}
	if len(byGroup) == 0 {
		return nil
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	match := &admissionv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{katalog.DeletionProtectionLabel: "true"}}}
	for _, g := range groups {
		sort.Strings(byGroup[g])
		match.ResourceRules = append(match.ResourceRules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Delete},
			Rule:       admissionv1.Rule{APIGroups: []string{g}, APIVersions: []string{"*"}, Resources: byGroup[g]},
		}})
	}
	name := dnsName("orkestra-" + katalogName + "-deletion-protection-objects")
	msg := fmt.Sprintf("the object carries %s=true and katalog %s protects it from deletion (security.deletionProtection); remove the label, then delete it", katalog.DeletionProtectionLabel, katalogName)
	return validating(katalogName, name, match, []admissionv1.Validation{{Expression: "false", Message: msg}}, admissionv1.Deny)
}

// namespaceValidation refuses custom resources outside the entry's
// allowedNamespaces, or inside its restrictedNamespaces.
func namespaceValidation(e *engine.Entry) (admissionv1.Validation, bool) {
	r := e.Source.Namespaces
	var parts []string
	if len(r.Allowed) > 0 {
		parts = append(parts, "("+anyPattern(r.Allowed)+")")
	}
	if len(r.Restricted) > 0 {
		parts = append(parts, "!("+anyPattern(r.Restricted)+")")
	}
	if len(parts) == 0 {
		return admissionv1.Validation{}, false
	}
	msg := fmt.Sprintf("%s may not be created in this namespace (allowedNamespaces %v, restrictedNamespaces %v; security.namespaceProtection)", e.GVK.Kind, r.Allowed, r.Restricted)
	return admissionv1.Validation{Expression: "request.namespace == '' || " + strings.Join(parts, " && "), Message: msg}, true
}

// anyPattern matches request.namespace against katalog namespace patterns
// (exact, prefix* or *suffix, as katalog.MatchNamespace).
func anyPattern(patterns []string) string {
	var or []string
	for _, p := range patterns {
		switch {
		case strings.HasSuffix(p, "*"):
			or = append(or, "request.namespace.startsWith("+celString(strings.TrimSuffix(p, "*"))+")")
		case strings.HasPrefix(p, "*"):
			or = append(or, "request.namespace.endsWith("+celString(strings.TrimPrefix(p, "*"))+")")
		default:
			or = append(or, "request.namespace == "+celString(p))
		}
	}
	return strings.Join(or, " || ")
}

var selfRe = regexp.MustCompile(`(^|[^.\w])(oldSelf|self)\b`)

// policyExpr is a rule in a policy's variables: object for self, oldObject
// for oldSelf; a transition rule holds on everything but updates.
func policyExpr(r *engine.AdmissionRule) string {
	e := selfRe.ReplaceAllStringFunc(r.Expr, func(m string) string {
		sub := selfRe.FindStringSubmatch(m)
		return sub[1] + map[string]string{"self": "object", "oldSelf": "oldObject"}[sub[2]]
	})
	if r.ReadsOld {
		return "request.operation != 'UPDATE' || (" + e + ")"
	}
	return e
}

// applyExpr is a mutation as an apply configuration: the field set when it
// is absent (or empty) for a default, always for an override.
func applyExpr(m *engine.Mutation) string {
	val := m.Expr
	if val == "" {
		val = celLiteral(m.Value)
	}
	obj := val
	for i := len(m.Path) - 1; i >= 0; i-- {
		typ := "Object"
		if i > 0 {
			typ += "." + strings.Join(m.Path[:i], ".")
		}
		obj = typ + "{" + m.Path[i] + ": " + obj + "}"
	}
	if m.Override {
		return obj
	}
	ref := "object"
	for _, seg := range m.Path {
		ref += ".?" + seg
	}
	absent := "!" + ref + ".hasValue()"
	if m.EmptyString {
		absent = ref + ".orValue('') == ''"
	}
	return absent + " ? " + obj + " : Object{}"
}

func celLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return celString(x)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

func celString(s string) string { return strconv.Quote(s) }

func objectMeta(katalogName, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelKatalog: katalogName, "app.kubernetes.io/managed-by": "orkestra"}}
}

// katalogName is the katalog's name as a label value.
func katalogName(plan *engine.Plan) string {
	if n := plan.DNSName(63); n != "" {
		return n
	}
	return "katalog"
}

func dnsName(s string) string { return engine.DNSName(s, 253) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
