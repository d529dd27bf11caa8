package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Secrets, ConfigMaps, NetworkPolicies, ResourceQuotas and LimitRanges may
// copy an existing object (fromSecret, fromConfigMap, fromNetworkPolicy, …:
// the kind's katalog.KindSpec.CopyKey, in fromNamespace — default the custom
// resource's), and may be written to several namespaces at once
// (toNamespaces). The source is read
// on every render (Options.ReadSource), so a drift-corrected copy follows its
// source; one created once (onCreate without reconcile) keeps what it copied.
// Declared data merges over the copied keys; the copy takes the source's type
// unless it declares one. Upstream: pkg/resources/secrets/secret.go,
// pkg/runtime/runners/secrets.go, documentation/reference/schema/
// 06-resources/secrets.md.

// CopyKey returns the field of a kind that copies an existing object, "" when
// the kind cannot copy.
func CopyKey(kind string) string { return katalog.ResourceKinds[kind].CopyKey }

// copiesAcrossNamespaces reports whether the child copies from or to other
// namespaces (fromNamespace, toNamespaces), what upstream's simulate skips.
func (c *Child) copiesAcrossNamespaces() bool {
	ns, _ := c.Fields["fromNamespace"].(string)
	return ns != "" || c.Resource.Fields.Get("toNamespaces") != nil
}

// source returns the object the child copies, nil when it copies none. Its
// namespace is fromNamespace, else the custom resource's, else "default".
func (b *builder) source() (client.Object, error) {
	spec := katalog.ResourceKinds[b.c.Kind]
	name := b.f.str(spec.CopyKey)
	if name == "" {
		return nil, nil
	}
	ns := b.f.str("fromNamespace")
	if ns == "" {
		ns = b.r.cr.GetNamespace()
	}
	if ns == "" {
		ns = "default"
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	b.c.CopyOf = &key
	if b.r.opts.ReadSource == nil {
		return nil, nil // offline: the copy holds the declared data only
	}
	gvk := schema.FromAPIVersionAndKind(spec.APIVersion, spec.Kind)
	memo := gvk.Kind + "/" + key.String()
	if obj, ok := b.r.sources[memo]; ok {
		return obj, nil
	}
	obj, err := b.r.opts.ReadSource(gvk, key)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the %s to copy, %s: %w", b.f.path(spec.CopyKey), spec.Kind, key, err)
	}
	if b.r.sources == nil {
		b.r.sources = map[string]client.Object{}
	}
	b.r.sources[memo] = obj
	return obj, nil
}

// copySecret fills s from its source: the source's keys under the declared
// ones, and its type unless one is declared.
func (b *builder) copySecret(s *corev1.Secret) error {
	obj, err := b.source()
	if err != nil || obj == nil {
		return err
	}
	src, ok := obj.(*corev1.Secret)
	if !ok {
		return fmt.Errorf("the source of a Secret copy is a %T", obj)
	}
	data := make(map[string][]byte, len(src.Data)+len(s.Data))
	for k, v := range src.Data {
		data[k] = v
	}
	for k, v := range s.Data {
		data[k] = v
	}
	s.Data = data
	if !b.f.has("type") && src.Type != "" {
		s.Type = src.Type
	}
	return nil
}

// copyConfigMap fills cm from its source, declared data over copied keys.
func (b *builder) copyConfigMap(cm *corev1.ConfigMap) error {
	obj, err := b.source()
	if err != nil || obj == nil {
		return err
	}
	src, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("the source of a ConfigMap copy is a %T", obj)
	}
	data := make(map[string]string, len(src.Data)+len(cm.Data))
	for k, v := range src.Data {
		data[k] = v
	}
	for k, v := range cm.Data {
		data[k] = v
	}
	cm.Data = data
	if len(src.BinaryData) > 0 {
		cm.BinaryData = src.BinaryData
	}
	return nil
}

// toNamespaces turns a declaration with toNamespaces into one child per
// target namespace (same name). An item may be a namespace or a list of them
// (`"{{ .spec.targetNamespaces }}"`); empty items are skipped, as upstream.
func (r *renderer) toNamespaces(c *Child) ([]*Child, error) {
	n := c.Resource.Fields.Get("toNamespaces")
	if n == nil {
		return []*Child{c}, nil
	}
	field := c.Resource.Fields.Field + ".toNamespaces"
	v, ok, err := n.Eval(c.scope)
	if err != nil {
		return nil, r.errorf(field, err)
	}
	var targets []string
	seen := map[string]bool{}
	var add func(v any) error
	add = func(v any) error {
		switch x := v.(type) {
		case nil:
		case []any:
			for _, item := range x {
				if err := add(item); err != nil {
					return err
				}
			}
		case string:
			if x != "" && !seen[x] {
				seen[x] = true
				targets = append(targets, x)
			}
		default:
			return fmt.Errorf("expects namespaces (strings or lists of them), got %s", describe(v))
		}
		return nil
	}
	if ok {
		if err := add(v); err != nil {
			return nil, r.errorf(field, err)
		}
	}
	out := make([]*Child, 0, len(targets))
	for _, ns := range targets {
		cp := *c
		cp.Namespace = ns
		out = append(out, &cp)
	}
	return out, nil
}
