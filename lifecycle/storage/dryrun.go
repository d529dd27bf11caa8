package storage

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Plan is what Migrate would do to a CRD.
type Plan struct {
	CRD            string
	StorageVersion string
	StoredVersions []string
	// Needed is false when storedVersions lists only the storage version.
	Needed bool
	// Resume is true when saved progress would be resumed: Objects then
	// counts only those after it.
	Resume bool
	// Objects is how many objects would be rewritten.
	Objects int64
}

// DryRun lists, without writing anything, the objects Migrate would rewrite
// (each, when set, is called with every one's namespace and name).
func (m *Migrator) DryRun(ctx context.Context, name string, each func(namespace, name string)) (Plan, error) {
	crd, err := m.crds().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Plan{CRD: name}, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	p := Plan{CRD: name, StorageVersion: StorageVersion(crd), StoredVersions: slices.Clone(crd.Status.StoredVersions), Needed: NeedsMigration(crd)}
	if !p.Needed {
		return p, nil
	}
	st, resumed, _ := savedState(crd)
	p.Resume = resumed
	cont := ""
	if resumed {
		cont = st.Continue
	}
	gvr := storageGVR(crd)
	for {
		list, err := m.meta.Resource(gvr).List(ctx, metav1.ListOptions{Limit: m.opts.PageSize, Continue: cont})
		if err != nil {
			return p, fmt.Errorf("listing %s at %s: %w", gvr.GroupResource(), gvr.Version, err)
		}
		for i := range list.Items {
			p.Objects++
			if each != nil {
				each(list.Items[i].Namespace, list.Items[i].Name)
			}
		}
		if cont = list.Continue; cont == "" {
			return p, nil
		}
	}
}
