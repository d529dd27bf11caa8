package render

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster-scoped objects: namespaces and persistentVolumes. They carry no
// owner reference (Kubernetes forbids a namespaced owner on them): delete
// them from onDelete when the custom resource goes, or leave them.

func init() {
	register("namespaces", &Kind{Build: buildNamespace, Drift: func(*Drift, Managed, client.Object, client.Object) {}})
	// The volume source cannot change on a live PersistentVolume.
	register("persistentVolumes", &Kind{Build: buildPV, Drift: driftPV, Recreates: []string{"hostPath", "csiDriver", "csiVolumeHandle", "volumeMode"}})
}

// buildNamespace: a Namespace is its name, labels and annotations (their
// drift is corrected for every kind).
func buildNamespace(b *builder) (client.Object, error) {
	return &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: b.meta()}, nil
}

// buildPV builds a PersistentVolume from capacity, accessModes (default
// ReadWriteOnce), reclaimPolicy (default Retain), storageClassName,
// volumeMode and its source: hostPath, or csiDriver with csiVolumeHandle
// (upstream: pkg/types/types_pvc.go PVTemplateSource).
func buildPV(b *builder) (client.Object, error) {
	f := &b.f
	pv := &corev1.PersistentVolume{
		TypeMeta:   typeMeta("v1", "PersistentVolume"),
		ObjectMeta: b.meta(),
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              f.str("storageClassName"),
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		},
	}
	if q, ok := b.quantity("capacity"); ok {
		pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
	}
	modes := f.strList("accessModes")
	if len(modes) == 0 {
		modes = []string{string(corev1.ReadWriteOnce)}
	}
	for _, m := range modes {
		pv.Spec.AccessModes = append(pv.Spec.AccessModes, corev1.PersistentVolumeAccessMode(m))
	}
	if p := f.str("reclaimPolicy"); p != "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimPolicy(p)
	}
	if vm := f.str("volumeMode"); vm != "" {
		mode := corev1.PersistentVolumeMode(vm)
		pv.Spec.VolumeMode = &mode
	}
	host, driver, handle := f.str("hostPath"), f.str("csiDriver"), f.str("csiVolumeHandle")
	switch {
	case host != "" && (driver != "" || handle != ""):
		f.fail("hostPath", "a PersistentVolume has one source: hostPath, or csiDriver with csiVolumeHandle")
	case host != "":
		pv.Spec.HostPath = &corev1.HostPathVolumeSource{Path: host}
	case driver != "" && handle != "":
		pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}
	default:
		f.fail("hostPath", "a PersistentVolume needs its source: hostPath, or csiDriver with csiVolumeHandle")
	}
	return pv, nil
}

func driftPV(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.PersistentVolume), live.(*corev1.PersistentVolume)
	wq, gq := w.Spec.Capacity[corev1.ResourceStorage], g.Spec.Capacity[corev1.ResourceStorage]
	if wq.Cmp(gq) != 0 {
		g.Spec.Capacity = w.Spec.Capacity
		d.add("capacity")
	}
	if !eqPlain(w.Spec.AccessModes, g.Spec.AccessModes) {
		g.Spec.AccessModes = w.Spec.AccessModes
		d.add("accessModes")
	}
	if w.Spec.PersistentVolumeReclaimPolicy != g.Spec.PersistentVolumeReclaimPolicy {
		g.Spec.PersistentVolumeReclaimPolicy = w.Spec.PersistentVolumeReclaimPolicy
		d.add("reclaimPolicy")
	}
	if m.has("storageClassName") && w.Spec.StorageClassName != g.Spec.StorageClassName {
		g.Spec.StorageClassName = w.Spec.StorageClassName
		d.add("storageClassName")
	}
	if !subset(w.Spec.PersistentVolumeSource, g.Spec.PersistentVolumeSource) {
		d.add("source")
		d.Recreate = true
	}
}
