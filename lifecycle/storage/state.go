package storage

import (
	"encoding/json"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// AnnotationProgress holds, on the CRD, the progress of a migration that
// writes the objects itself, so that a restarted operator (or command)
// resumes after the last finished page instead of starting over.
const AnnotationProgress = "storage.orkestra.orkspace.io/migration"

// progressState is what AnnotationProgress holds (JSON). A migration may
// resume from it only while the CRD is the one it started on: same uid,
// generation, storage version and stored versions.
type progressState struct {
	UID            string   `json:"uid"`
	Generation     int64    `json:"generation"`
	StorageVersion string   `json:"storageVersion"`
	StoredVersions []string `json:"storedVersions"`
	// Continue is the list continue token after the last finished page;
	// empty before the first page.
	Continue string `json:"continue,omitempty"`
	// Pages, Migrated and Skipped count what the finished pages did.
	Pages    int64 `json:"pages"`
	Migrated int64 `json:"migrated"`
	Skipped  int64 `json:"skipped"`
}

// newState is the state of a migration starting now on crd.
func newState(crd *apiextensionsv1.CustomResourceDefinition) progressState {
	return progressState{
		UID:            string(crd.UID),
		Generation:     crd.Generation,
		StorageVersion: StorageVersion(crd),
		StoredVersions: slices.Clone(crd.Status.StoredVersions),
	}
}

// savedState returns the progress saved on crd when a migration may resume
// from it; ok is false when there is none or it belongs to another state of
// the CRD (the reason says which, for the log).
func savedState(crd *apiextensionsv1.CustomResourceDefinition) (st progressState, ok bool, reason string) {
	raw, has := crd.Annotations[AnnotationProgress]
	if !has {
		return st, false, ""
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, false, fmt.Sprintf("annotation %s is not valid JSON (%v); starting over", AnnotationProgress, err)
	}
	cur := newState(crd)
	switch {
	case st.UID != cur.UID:
		return st, false, "the saved progress is of an earlier CRD of the same name; starting over"
	case st.Generation != cur.Generation || st.StorageVersion != cur.StorageVersion:
		return st, false, fmt.Sprintf("the CRD changed since the saved progress (generation %d, storage %s; now %d, %s); starting over", st.Generation, st.StorageVersion, cur.Generation, cur.StorageVersion)
	case !slices.Equal(st.StoredVersions, cur.StoredVersions):
		return st, false, fmt.Sprintf("status.storedVersions changed since the saved progress (%v; now %v); starting over", st.StoredVersions, cur.StoredVersions)
	}
	return st, true, ""
}

func (st progressState) encode() string {
	b, _ := json.Marshal(st)
	return string(b)
}

// StorageVersion returns the version crd stores new writes at.
func StorageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// NeedsMigration reports whether objects of crd may be stored at versions
// other than its storage version: status.storedVersions lists another one.
func NeedsMigration(crd *apiextensionsv1.CustomResourceDefinition) bool {
	storage := StorageVersion(crd)
	for _, v := range crd.Status.StoredVersions {
		if v != storage {
			return true
		}
	}
	return false
}
