// Package crdspec builds the CustomResourceDefinition Orkestra installs for a
// katalog CRD (orkestra manifests, orkestra dev, conformance): the manifest's
// spec, the katalog's deprecations, and conversion through the /convert
// webhook only where a conversion needs it.
package crdspec

import (
	"fmt"
	"maps"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// ReviewVersions are the ConversionReview versions the webhook answers.
var ReviewVersions = []string{"v1", "v1beta1"}

// Strategy is how an installed CRD converts between its versions.
type Strategy int

const (
	// NoConversion: the katalog declares no conversion for the CRD.
	NoConversion Strategy = iota
	// Identity: the katalog's conversion only rewrites apiVersion, so the
	// CRD is installed with strategy None and the webhook is never called.
	Identity
	// Webhook: strategy Webhook through the /convert webhook.
	Webhook
)

func (s Strategy) String() string {
	switch s {
	case Identity:
		return "None (identity conversion)"
	case Webhook:
		return "Webhook"
	}
	return "None"
}

// Spec returns the spec to install for crd: a copy of the manifest's, with
// each version's deprecated/deprecationWarning as the katalog marks it, and
// conversion through cc when the plan's conversion of the CRD is not the
// identity.
func Spec(plan *engine.Plan, crd *katalog.CRD, cc apiextensionsv1.WebhookClientConfig) (apiextensionsv1.CustomResourceDefinitionSpec, Strategy) {
	spec := *crd.Object.Spec.DeepCopy()
	plan.Katalog.ApplyDeprecations(crd, &spec)
	for i := range spec.Versions {
		v := &spec.Versions[i]
		if rules := admission.CRDRules(plan, crd, v.Name); len(rules) > 0 && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			// The katalog's deny rules on the object's own fields.
			v.Schema.OpenAPIV3Schema.XValidations = append(v.Schema.OpenAPIV3Schema.XValidations, rules...)
		}
	}
	gk := crd.GroupKind()
	switch {
	case plan.ConvertsByWebhook(gk):
		spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &cc,
				ConversionReviewVersions: append([]string(nil), ReviewVersions...),
			},
		}
		return spec, Webhook
	case plan.Conversions[gk] != nil:
		spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		return spec, Identity
	}
	return spec, NoConversion
}

// Annotations returns the annotations to install crd with: the manifest's,
// and admission.AnnotationRules listing the katalog's validation rules Spec
// adds, so that `orkestra run` knows them for its own and removes those a
// later katalog no longer declares.
func Annotations(plan *engine.Plan, crd *katalog.CRD) map[string]string {
	rules := admission.RulesAnnotation(plan, crd)
	if rules == "" {
		return crd.Object.Annotations
	}
	out := maps.Clone(crd.Object.Annotations)
	if out == nil {
		out = map[string]string{}
	}
	out[admission.AnnotationRules] = rules
	return out
}

// IdentityNote is what manifests and dev say about a CRD installed without
// the webhook because its conversion is the identity.
func IdentityNote(crdName string) string {
	return fmt.Sprintf("CRD %s: every version has the same schema and every conversion path only copies fields, so it is installed with conversion.strategy: None (the API server rewrites apiVersion itself and never calls the webhook)", crdName)
}
