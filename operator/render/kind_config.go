package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Configuration and storage: configMaps, secrets, serviceAccounts,
// persistentVolumeClaims.

func init() {
	register("configMaps", &Kind{Build: buildConfigMap, Drift: driftConfigMap})
	// A Secret's type is immutable: changing it (declared, or the copied
	// source's) recreates the Secret.
	register("secrets", &Kind{Build: buildSecret, Drift: driftSecret, Recreates: []string{"type", "fromSecret"}})
	register("serviceAccounts", &Kind{Build: buildServiceAccount, Drift: driftServiceAccount})
	register("persistentVolumeClaims", &Kind{Build: buildPVC, Drift: driftPVC})
}

func buildConfigMap(b *builder) (client.Object, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   typeMeta("v1", "ConfigMap"),
		ObjectMeta: b.meta(),
		Data:       b.f.strMap("data"),
	}
	return cm, b.copyConfigMap(cm)
}

// buildSecret writes data's plain strings as the secret's bytes (the API's
// base64 in data), like stringData.
func buildSecret(b *builder) (client.Object, error) {
	meta := b.meta()
	if ra := b.c.Resource.RotateAfter; ra > 0 {
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[AnnotationRotateAfter] = ra.String()
	}
	s := &corev1.Secret{
		TypeMeta:   typeMeta("v1", "Secret"),
		ObjectMeta: meta,
		Type:       corev1.SecretType(b.f.str("type")),
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if data := b.f.strMap("data"); data != nil {
		s.Data = make(map[string][]byte, len(data))
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
	}
	return s, b.copySecret(s)
}

func buildServiceAccount(b *builder) (client.Object, error) {
	return &corev1.ServiceAccount{
		TypeMeta:                     typeMeta("v1", "ServiceAccount"),
		ObjectMeta:                   b.meta(),
		AutomountServiceAccountToken: b.f.bool("automountServiceAccountToken"),
		ImagePullSecrets:             localRefs(b.f.strList("imagePullSecrets")),
	}, nil
}

func buildPVC(b *builder) (client.Object, error) {
	f := &b.f
	modes := f.strList("accessModes")
	if len(modes) == 0 {
		modes = []string{string(corev1.ReadWriteOnce)}
	}
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   typeMeta("v1", "PersistentVolumeClaim"),
		ObjectMeta: b.meta(),
	}
	for _, m := range modes {
		pvc.Spec.AccessModes = append(pvc.Spec.AccessModes, corev1.PersistentVolumeAccessMode(m))
	}
	if q, ok := b.quantity("storage"); ok {
		pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
	}
	if cls := f.str("storageClassName"); f.has("storageClassName") {
		pvc.Spec.StorageClassName = &cls
	}
	if vm := f.str("volumeMode"); vm != "" {
		mode := corev1.PersistentVolumeMode(vm)
		pvc.Spec.VolumeMode = &mode
	}
	pvc.Spec.VolumeName = f.str("volumeName")
	return pvc, nil
}

// quantity reads a resource quantity: a string such as 10Gi, or an integer
// number of bytes.
func (b *builder) quantity(key string) (resource.Quantity, bool) {
	v, ok := b.f.fields[key]
	if !ok || v == nil {
		return resource.Quantity{}, false
	}
	if s, ok := v.(string); ok {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			b.f.fail(key, "%q is not a quantity such as 10Gi or 500Mi: %v", s, err)
			return resource.Quantity{}, false
		}
		return q, true
	}
	i, ok := b.f.int(key)
	if !ok {
		return resource.Quantity{}, false
	}
	return *resource.NewQuantity(i, resource.BinarySI), true
}

// ---- drift ----

func driftConfigMap(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.ConfigMap), live.(*corev1.ConfigMap)
	if (m.has("data") || m.has("fromConfigMap")) && !eqStringMap(w.Data, g.Data) {
		g.Data = w.Data
		d.add("data")
	}
	if m.has("fromConfigMap") && !eqBytesMap(w.BinaryData, g.BinaryData) {
		g.BinaryData = w.BinaryData
		d.add("binaryData")
	}
}

func driftSecret(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.Secret), live.(*corev1.Secret)
	if (m.has("type") || m.has("fromSecret")) && w.Type != g.Type {
		d.add("type")
		d.Recreate = true
	}
	if (m.has("data") || m.has("fromSecret")) && !eqBytesMap(w.Data, g.Data) {
		g.Data = w.Data
		d.add("data")
	}
}

func driftServiceAccount(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.ServiceAccount), live.(*corev1.ServiceAccount)
	if m.has("automountServiceAccountToken") && !eqBool(w.AutomountServiceAccountToken, g.AutomountServiceAccountToken) {
		g.AutomountServiceAccountToken = w.AutomountServiceAccountToken
		d.add("automountServiceAccountToken")
	}
	if m.has("imagePullSecrets") && !subset(w.ImagePullSecrets, g.ImagePullSecrets) {
		g.ImagePullSecrets = w.ImagePullSecrets
		d.add("imagePullSecrets")
	}
}

// driftPVC compares the storage request only: it is the one field of a bound
// claim that can change (expansion).
func driftPVC(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.PersistentVolumeClaim), live.(*corev1.PersistentVolumeClaim)
	if !m.has("storage") {
		return
	}
	wq, gq := w.Spec.Resources.Requests[corev1.ResourceStorage], g.Spec.Resources.Requests[corev1.ResourceStorage]
	if wq.Cmp(gq) != 0 {
		if g.Spec.Resources.Requests == nil {
			g.Spec.Resources.Requests = corev1.ResourceList{}
		}
		g.Spec.Resources.Requests[corev1.ResourceStorage] = wq
		d.add("storage")
	}
}
