package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/operator/render"
)

func newRenderCmd() *cobra.Command {
	var kf katalogFlags
	var namespace string
	var childFiles []string
	var admissionOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "render -f KATALOG [-o report|manifests|json] [CR.yaml…]",
		Short: "Print offline the child objects and status a custom resource reconciles into",
		Long: `render reads custom resources (from the files given, stdin when none) and
prints, per resource, the child objects each hook of its katalog entry
declares — with whether each one's when/or condition holds, whether it is
drift-corrected (reconcile) and whether it is deleted when its condition stops
holding (prune), each with the key or default that decided — and the status
fields, exactly as ` + "`orkestra run`" + ` would apply them: the same code renders them.

Like the API server, render first applies the CRD schema's defaults, and
converts a resource stored at another version to the version of the entry
that reconciles its kind (through the katalog's conversion paths). Children
carry no owner reference (an offline resource has no UID). A resource
without metadata.namespace is placed in --namespace.

Expressions that read the resource's children back (children, .children)
see the objects of --children files: those labelled orkestra-owner with the
resource's name, and those without that label. Without --children they see
none, as before the first reconcile.

-o manifests prints instead plain multi-document YAML of the children whose
conditions hold (onCreate and onReconcile, each object once, in apply
order), ready for kubectl apply -f - or kubectl diff -f -; -o json prints the
report as JSON (one document, a list when several resources are given).

With --admission, render prints instead where the katalog's admission rules
run: each CRD version's validation rules (x-kubernetes-validations) and the
ValidatingAdmissionPolicies, MutatingAdmissionPolicies and bindings that
orkestra run applies.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			if err := checkOutput(output, "report", "manifests", "json"); err != nil {
				return err
			}
			if admissionOnly {
				return writeAdmission(cmd.OutOrStdout(), plan)
			}
			objs, err := readObjects(args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			var kids []*unstructured.Unstructured
			if len(childFiles) > 0 {
				if kids, err = readObjects(childFiles, nil); err != nil {
					return err
				}
			}
			conv := conversion.New(plan, conversion.Options{})
			var reports []*renderedCR
			for _, o := range objs {
				out, err := renderOne(plan, conv, o, namespace, kids)
				if err != nil {
					return err
				}
				reports = append(reports, out)
			}
			switch output {
			case "manifests":
				return writeObjects(cmd.OutOrStdout(), appliedChildren(reports))
			case "json":
				var doc any = reports
				if len(reports) == 1 {
					doc = reports[0]
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(doc)
			}
			for i, out := range reports {
				if i > 0 {
					if _, err := io.WriteString(cmd.OutOrStdout(), "---\n"); err != nil {
						return err
					}
				}
				if err := writeYAML(cmd.OutOrStdout(), out); err != nil {
					return fmt.Errorf("writing output: %w", err)
				}
			}
			return nil
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "report", "output: report (children, conditions and status), manifests (the children to apply, as YAML) or json (the report)")
	cmd.Flags().BoolVar(&admissionOnly, "admission", false, "print where the katalog's admission rules run (CRD validation rules and admission policies) instead of rendering resources")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of resources that do not name one (namespaced CRDs)")
	cmd.Flags().StringArrayVar(&childFiles, "children", nil, "file of observed child objects (with their status) that expressions read back; repeatable")
	return cmd
}

// renderedCR is render's output for one custom resource.
type renderedCR struct {
	Object        string          `yaml:"object" json:"object"`
	APIVersion    string          `yaml:"apiVersion" json:"apiVersion"`
	Entry         string          `yaml:"entry" json:"entry"`
	ConvertedFrom string          `yaml:"convertedFrom,omitempty" json:"convertedFrom,omitempty"`
	OnCreate      []renderedChild `yaml:"onCreate,omitempty" json:"onCreate,omitempty"`
	OnReconcile   []renderedChild `yaml:"onReconcile,omitempty" json:"onReconcile,omitempty"`
	OnDelete      []renderedChild `yaml:"onDelete,omitempty" json:"onDelete,omitempty"`
	Status        map[string]any  `yaml:"status,omitempty" json:"status,omitempty"`
	StatusErrors  []string        `yaml:"statusErrors,omitempty" json:"statusErrors,omitempty"`
	// Conditions are status.conditions as they would be written (beside
	// Ready, which depends on the children as observed).
	Conditions []renderedCondition `yaml:"conditions,omitempty" json:"conditions,omitempty"`
	Finalizers []string            `yaml:"finalizers,omitempty" json:"finalizers,omitempty"`
	Notes      []string            `yaml:"notes,omitempty" json:"notes,omitempty"`
}

// renderedCondition is one condition of status.conditions.
type renderedCondition struct {
	Type    string `yaml:"type" json:"type"`
	Status  string `yaml:"status" json:"status"`
	Reason  string `yaml:"reason" json:"reason"`
	Message string `yaml:"message,omitempty" json:"message,omitempty"`
}

// conditionSource is a condition's source ("" for none).
func conditionSource(c engine.Condition) string {
	if c == nil {
		return ""
	}
	return strings.TrimSpace(c.Source())
}

// renderedChild is one declared child.
type renderedChild struct {
	Kind      string `yaml:"kind" json:"kind"`
	Name      string `yaml:"name" json:"name"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// When is whether the child's when/or conditions hold.
	When bool `yaml:"when" json:"when"`
	// Reconcile is true for drift-corrected children; ReconcileFrom says
	// what decided (the reconcile: key, or the hook's default).
	Reconcile     bool   `yaml:"reconcile" json:"reconcile"`
	ReconcileFrom string `yaml:"reconcileFrom,omitempty" json:"reconcileFrom,omitempty"`
	// Prune: deleted when its condition stops holding; PruneItems (forEach
	// children): deleted when its item is gone; PruneFrom: what decided.
	// Absent for onDelete children.
	Prune       *bool  `yaml:"prune,omitempty" json:"prune,omitempty"`
	PruneItems  *bool  `yaml:"pruneItems,omitempty" json:"pruneItems,omitempty"`
	PruneFrom   string `yaml:"pruneFrom,omitempty" json:"pruneFrom,omitempty"`
	Once        bool   `yaml:"once,omitempty" json:"once,omitempty"`
	RotateAfter string `yaml:"rotateAfter,omitempty" json:"rotateAfter,omitempty"`
	// Wave is its place in the order children are made in (dependsOn, as
	// "id condition"), and deleted in reverse; ReadyWhen says when it is
	// ready.
	Wave      int            `yaml:"wave,omitempty" json:"wave,omitempty"`
	DependsOn []string       `yaml:"dependsOn,omitempty" json:"dependsOn,omitempty"`
	ReadyWhen string         `yaml:"readyWhen,omitempty" json:"readyWhen,omitempty"`
	Declared  string         `yaml:"declared" json:"declared"`
	Object    map[string]any `yaml:"object,omitempty" json:"object,omitempty"`
}

// reconcilingEntry returns the entry that reconciles obj's kind (else the
// entry of its exact version).
func reconcilingEntry(plan *engine.Plan, o *unstructured.Unstructured) (*engine.Entry, error) {
	gvk := o.GroupVersionKind()
	if e := plan.Reconciler(gvk.GroupKind()); e != nil {
		return e, nil
	}
	if e := plan.EntryFor(gvk); e != nil {
		return e, nil
	}
	var known []string
	for _, e := range plan.Entries {
		known = append(known, fmt.Sprintf("%s (%s)", e.Name, e.GVK.GroupVersion().WithKind(e.GVK.Kind)))
	}
	return nil, fmt.Errorf("no katalog entry serves %s %s; the katalog's entries: %s", o.GetAPIVersion(), o.GetKind(), strings.Join(known, ", "))
}

func renderOne(plan *engine.Plan, conv *conversion.Converter, o *unstructured.Unstructured, namespace string, children []*unstructured.Unstructured) (*renderedCR, error) {
	e, err := reconcilingEntry(plan, o)
	if err != nil {
		return nil, err
	}
	if e.Namespaced && o.GetNamespace() == "" {
		o.SetNamespace(namespace)
	}
	from := o.GroupVersionKind().Version
	if crd := e.Source.CRD; crd != nil {
		if s := crd.Schemas[from]; s != nil {
			defaulting.Default(o.Object, s)
		}
	}
	out := &renderedCR{Entry: e.Name}
	if from != e.GVK.Version {
		converted, err := conv.Convert(o, e.GVK.GroupVersion().String())
		if err != nil {
			return nil, err
		}
		o = converted
		out.ConvertedFrom = from
		if e.Schema != nil {
			defaulting.Default(o.Object, e.Schema)
		}
	}
	res, err := render.RenderWith(e, o, render.Options{Children: childrenOf(e, o, children)})
	if err != nil {
		return nil, err
	}
	out.Object = fmt.Sprintf("%s %s", o.GetKind(), objectName(o))
	out.APIVersion = o.GetAPIVersion()
	out.Status = res.Status
	for _, err := range res.StatusErrors {
		out.StatusErrors = append(out.StatusErrors, err.Error())
	}
	if !e.Reconciles {
		out.Notes = append(out.Notes, fmt.Sprintf("entry %s does not reconcile (enabled: %v): `orkestra run` applies none of this", e.Name, e.Enabled))
	}
	out.Finalizers = operator.Finalizers(e)
	for _, c := range res.Conditions {
		out.Conditions = append(out.Conditions, renderedCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	for _, h := range katalog.Hooks {
		var list []renderedChild
		for _, c := range res.Hooks[h] {
			rc := renderedChild{
				Kind:      c.Kind,
				Name:      c.Name,
				Namespace: c.Namespace,
				When:      c.When,
				Reconcile: c.Reconciled,
				Once:      c.Resource.Once,
				Declared:  fmt.Sprintf("%s (%s)", c.Resource.Fields.Field, c.Resource.Fields.Pos),
			}
			if h != katalog.OnDelete {
				m := c.Resource.Modes
				rc.ReconcileFrom, rc.Prune, rc.PruneFrom = m.ReconcileReason(h, c.Kind), &m.Prune, m.PruneReason(c.Kind)
				if c.Resource.ForEach != nil {
					rc.PruneItems = &m.PruneItems
				}
			}
			rc.Wave, rc.ReadyWhen = c.Resource.Wave, conditionSource(c.Resource.ReadyWhen)
			for _, n := range c.Resource.Needs {
				rc.DependsOn = append(rc.DependsOn, n.On.Source.ID+" "+n.Condition)
			}
			if c.Resource.RotateAfter > 0 {
				rc.RotateAfter = c.Resource.RotateAfter.String()
			}
			if c.Object != nil {
				rc.Object = c.Object.Object
			}
			list = append(list, rc)
		}
		switch h {
		case katalog.OnCreate:
			out.OnCreate = list
		case katalog.OnReconcile:
			out.OnReconcile = list
		case katalog.OnDelete:
			out.OnDelete = list
		}
	}
	return out, nil
}

// childrenOf is the children view of cr from the --children objects: those
// labelled as cr's, and those carrying no owner label.
func childrenOf(e *engine.Entry, cr *unstructured.Unstructured, objs []*unstructured.Unstructured) map[string]any {
	if len(objs) == 0 {
		return nil
	}
	var mine []map[string]any
	for _, c := range objs {
		owner, labelled := c.GetLabels()[render.LabelOwner]
		if !labelled || owner == render.LabelValue(cr.GetName()) {
			mine = append(mine, c.Object)
		}
	}
	return render.ChildrenView(e, mine)
}

func objectName(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func writeYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// writeAdmission prints the CRD validation rules and the admission policies
// of a plan, as YAML documents.
func writeAdmission(w io.Writer, plan *engine.Plan) error {
	var docs []any
	seen := map[*katalog.CRD]bool{}
	for _, e := range plan.Entries {
		crd := e.Source.CRD
		if crd == nil || seen[crd] {
			continue
		}
		seen[crd] = true
		for _, v := range crd.Object.Spec.Versions {
			if rules := admission.CRDRules(plan, crd, v.Name); len(rules) > 0 {
				docs = append(docs, map[string]any{"crd": crd.Object.Name, "version": v.Name, "x-kubernetes-validations": rules})
			}
		}
	}
	for _, o := range admission.Policies(plan) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return err
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		docs = append(docs, u)
	}
	if len(docs) == 0 {
		_, err := io.WriteString(w, "# the katalog declares no admission rules\n")
		return err
	}
	for i, d := range docs {
		b, err := sigsyaml.Marshal(d)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// appliedChildren are the objects orkestra run would apply for the rendered
// resources: the onCreate and onReconcile children whose conditions hold,
// each object once, in apply order (the hooks' order, each hook in kind
// order).
func appliedChildren(reports []*renderedCR) []map[string]any {
	var out []map[string]any
	seen := map[string]bool{}
	for _, r := range reports {
		kids := append(append([]renderedChild(nil), r.OnCreate...), r.OnReconcile...)
		// Waves first (dependsOn), then what a workload mounts exists
		// before it: the katalog's kind order.
		sort.SliceStable(kids, func(i, j int) bool {
			if kids[i].Wave != kids[j].Wave {
				return kids[i].Wave < kids[j].Wave
			}
			return slices.Index(katalog.ApplyOrder, kids[i].Kind) < slices.Index(katalog.ApplyOrder, kids[j].Kind)
		})
		for _, c := range kids {
			key := c.Kind + "/" + c.Namespace + "/" + c.Name
			if !c.When || c.Object == nil || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, c.Object)
		}
	}
	return out
}
