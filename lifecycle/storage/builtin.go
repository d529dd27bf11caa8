package storage

import (
	"context"
	"fmt"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelMigration marks the StorageVersionMigrations a Migrator creates with
// the CRD they migrate.
const LabelMigration = "storage.orkestra.orkspace.io/crd"

// viaBuiltin hands the migration to the cluster's built-in migrator: it
// creates a StorageVersionMigration for the CRD's resource and follows its
// conditions. When none appears within BuiltinTimeout (no
// kube-controller-manager runs its controller — envtest, some
// distributions) or the API is not served, it deletes what it created,
// remembers that the built-in migrator is not available, and returns
// ran=false so that the objects are written by the Migrator itself.
func (m *Migrator) viaBuiltin(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, rep *reporter) (ran bool, err error) {
	svms := m.kube.StoragemigrationV1().StorageVersionMigrations()
	svm := &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: truncate("orkestra-"+crd.Spec.Names.Plural, 50) + "-",
			Labels:       map[string]string{LabelMigration: truncate(crd.Name, 63)},
		},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}},
	}
	created, err := svms.Create(ctx, svm, metav1.CreateOptions{FieldManager: m.opts.FieldManager})
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		m.builtin.Store(builtinUnavailable)
		m.opts.Log.Info("the built-in storage migrator cannot be used; Orkestra rewrites the objects itself", "crd", crd.Name, "reason", err.Error())
		return false, nil
	}
	rep.update(func(p *Progress) { p.Method = MethodBuiltin })
	deadline := time.Now().Add(m.opts.BuiltinTimeout)
	tick := time.NewTicker(m.opts.BuiltinPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-tick.C:
		}
		got, err := svms.Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return true, fmt.Errorf("reading StorageVersionMigration %s: %w", created.Name, err)
		}
		conds := got.Status.Conditions
		switch {
		case meta.IsStatusConditionTrue(conds, string(svmv1.MigrationSucceeded)):
			m.builtin.Store(builtinAvailable)
			return true, nil
		case meta.IsStatusConditionTrue(conds, string(svmv1.MigrationFailed)):
			c := meta.FindStatusCondition(conds, string(svmv1.MigrationFailed))
			return true, fmt.Errorf("the built-in StorageVersionMigration %s failed: %s: %s", created.Name, c.Reason, c.Message)
		case len(conds) == 0 && m.builtin.Load() != builtinAvailable && time.Now().After(deadline):
			err := svms.Delete(ctx, created.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("deleting StorageVersionMigration %s, which made no progress in %s: %w", created.Name, m.opts.BuiltinTimeout, err)
			}
			m.builtin.Store(builtinUnavailable)
			m.opts.Log.Info("the built-in storage migrator did not take up the migration; Orkestra rewrites the objects itself", "crd", crd.Name, "waited", m.opts.BuiltinTimeout.String())
			rep.update(func(p *Progress) { p.Method = MethodOrkestra })
			return false, nil
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
