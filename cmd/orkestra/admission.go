package main

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator"
)

// Reasons of the events on what applyAdmission removes.
const (
	ReasonRuleRemoved   = "AdmissionRuleRemoved"
	ReasonPolicyRemoved = "AdmissionPolicyRemoved"
)

// applyAdmission makes what run manages of the katalog's admission rules
// exactly the katalog's before anything is reconciled: the CRDs' validation
// rules Orkestra put there (admission.AnnotationRules) and, unless without,
// the policies and bindings it owns. What it removes is logged and recorded as an event. A cluster
// without the policy APIs is an error unless the user opts out.
func applyAdmission(ctx context.Context, cfg *rest.Config, mgr manager.Manager, plan *engine.Plan, without bool, log logr.Logger) error {
	scheme := mgr.GetScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	// The manager's client reads from a cache that has not started yet.
	direct, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	rec := mgr.GetEventRecorder(operator.EventReporter)
	applied, removed, err := admission.ApplyCRDRules(ctx, direct, plan)
	if err != nil {
		return fmt.Errorf("admission rules: %w", err)
	}
	if len(applied) > 0 {
		log.Info("CRD validation rules applied", "rules", len(applied))
	}
	for _, r := range removed {
		log.Info("removed a CRD validation rule the katalog no longer declares", "crd", r.CRD, "version", r.Version, "rule", r.Rule)
		crd := &apiextensionsv1.CustomResourceDefinition{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{Name: r.CRD},
		}
		rec.Eventf(crd, nil, corev1.EventTypeNormal, ReasonRuleRemoved, "RemoveRule", "version %s: x-kubernetes-validations rule %q removed: katalog %s no longer declares it", r.Version, r.Rule, plan.Katalog.Name)
	}
	return applyPolicies(ctx, cfg, direct, plan, without, rec, log)
}

// applyPolicies applies the katalog's admission policies and removes those
// it no longer declares.
func applyPolicies(ctx context.Context, cfg *rest.Config, c client.Client, plan *engine.Plan, without bool, rec events.EventRecorder, log logr.Logger) error {
	if without {
		if len(admission.Policies(plan)) > 0 {
			log.Info("the katalog's admission policies are not enforced (--without-admission-policies)")
		}
		return nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := admission.Check(dc, plan); err != nil {
		return err
	}
	applied, deleted, err := admission.Apply(ctx, c, c.Scheme(), plan)
	if err != nil {
		return fmt.Errorf("admission policies: %w", err)
	}
	if len(applied) > 0 {
		log.Info("admission policies applied", "applied", applied)
	}
	for _, d := range deleted {
		log.Info("removed an admission policy the katalog no longer declares", "object", d.Kind+"/"+d.Name)
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind(d.Kind)
		u.SetName(d.Name)
		u.SetUID(d.UID)
		rec.Eventf(u, nil, corev1.EventTypeNormal, ReasonPolicyRemoved, "Delete", "%s %s deleted: katalog %s no longer declares it", d.Kind, d.Name, plan.Katalog.Name)
	}
	return nil
}
