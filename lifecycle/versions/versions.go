// Package versions reports, per CRD of a katalog and per version, what a
// cluster says about it — served, storage, in status.storedVersions,
// deprecated, objects stored at it, conversions Orkestra's webhook made from
// and to it — and whether the version is safe to stop serving or to remove.
package versions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
)

// Verdicts.
const (
	SafeToStopServing = "safe to stop serving"
	SafeToRemove      = "safe to remove"
	NotYet            = "not yet"
)

// DefaultIdle is how long no client may have used a version (no conversion
// to it seen) before it is safe to stop serving.
const DefaultIdle = 24 * time.Hour

// Report is the answer of `orkestra versions`.
type Report struct {
	// Conversions says where the conversion counters came from.
	Conversions Source      `json:"conversions"`
	CRDs        []CRDReport `json:"crds"`
}

// CRDReport is one CRD.
type CRDReport struct {
	Name           string   `json:"name"`
	Kind           string   `json:"kind"`
	StorageVersion string   `json:"storageVersion"`
	StoredVersions []string `json:"storedVersions"`
	// Objects is how many objects the CRD has (null: unknown).
	Objects *int64 `json:"objects"`
	// Conversion is the CRD's conversion strategy in the cluster.
	Conversion string `json:"conversion"`
	// MigrationInProgress is true when a storage migration saved progress.
	MigrationInProgress bool            `json:"migrationInProgress"`
	Versions            []VersionReport `json:"versions"`
	// Error is set when the CRD could not be read; nothing else is then.
	Error string `json:"error,omitempty"`
}

// VersionReport is one version of a CRD.
type VersionReport struct {
	Name               string  `json:"name"`
	Served             bool    `json:"served"`
	Storage            bool    `json:"storage"`
	InStoredVersions   bool    `json:"inStoredVersions"`
	Deprecated         bool    `json:"deprecated"`
	DeprecationWarning *string `json:"deprecationWarning,omitempty"`
	// Objects stored at the version, where knowable (null otherwise).
	Objects *int64 `json:"objects"`
	// ConversionsTo and ConversionsFrom count the objects Orkestra's webhook
	// converted to and from the version since the operator started (null:
	// unknown). LastConversionTo is when one was last converted to it.
	ConversionsTo    *float64   `json:"conversionsTo"`
	ConversionsFrom  *float64   `json:"conversionsFrom"`
	LastConversionTo *time.Time `json:"lastConversionTo,omitempty"`
	// Entry is the katalog entry at this version, if any.
	Entry   string   `json:"entry,omitempty"`
	Verdict string   `json:"verdict"`
	Because []string `json:"because,omitempty"`
}

// Options configure Build.
type Options struct {
	// Conversions are the webhook's counters (see Scrape).
	Conversions Counters
	// Idle is how long no conversion to a version may have been seen
	// before it is safe to stop serving (default DefaultIdle).
	Idle time.Duration
	// Now is the current time (default time.Now).
	Now func() time.Time
}

// Build reads every CRD of plan from the cluster and judges each version.
func Build(ctx context.Context, cfg *rest.Config, plan *engine.Plan, opts Options) (*Report, error) {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := &Report{Conversions: opts.Conversions.Source}
	for _, name := range plan.CRDNames() {
		cr := CRDReport{Name: name}
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			cr.Error = "not installed in the cluster"
		case err != nil:
			cr.Error = fmt.Sprintf("reading the CRD: %v", err)
		default:
			cr = judge(ctx, meta, plan, crd, opts)
		}
		r.CRDs = append(r.CRDs, cr)
	}
	return r, nil
}

// judge builds the report of one installed CRD.
func judge(ctx context.Context, meta metadata.Interface, plan *engine.Plan, crd *apiextensionsv1.CustomResourceDefinition, opts Options) CRDReport {
	cr := CRDReport{
		Name:           crd.Name,
		Kind:           crd.Spec.Names.Kind,
		StorageVersion: storage.StorageVersion(crd),
		StoredVersions: slices.Clone(crd.Status.StoredVersions),
		Conversion:     string(apiextensionsv1.NoneConverter),
	}
	if c := crd.Spec.Conversion; c != nil && c.Strategy != "" {
		cr.Conversion = string(c.Strategy)
	}
	_, cr.MigrationInProgress = crd.Annotations[storage.AnnotationProgress]
	cr.Objects = countObjects(ctx, meta, crd)
	for _, v := range crd.Spec.Versions {
		vr := VersionReport{
			Name:               v.Name,
			Served:             v.Served,
			Storage:            v.Storage,
			InStoredVersions:   slices.Contains(crd.Status.StoredVersions, v.Name),
			Deprecated:         v.Deprecated,
			DeprecationWarning: v.DeprecationWarning,
		}
		switch {
		case !vr.InStoredVersions:
			zero := int64(0)
			vr.Objects = &zero
		case len(crd.Status.StoredVersions) == 1:
			vr.Objects = cr.Objects
		}
		if e := plan.EntryFor(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}); e != nil {
			vr.Entry = e.Name
		}
		opts.Conversions.fill(&vr, crd.Spec.Names.Kind)
		verdict(&vr, cr, plan, opts)
		cr.Versions = append(cr.Versions, vr)
	}
	return cr
}

// countObjects counts the CRD's objects with a one-item list (the API
// server says how many remain); nil when it does not.
func countObjects(ctx context.Context, meta metadata.Interface, crd *apiextensionsv1.CustomResourceDefinition) *int64 {
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storage.StorageVersion(crd), Resource: crd.Spec.Names.Plural}
	list, err := meta.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil
	}
	n := int64(len(list.Items))
	switch {
	case list.RemainingItemCount != nil:
		n += *list.RemainingItemCount
	case list.Continue != "":
		return nil
	}
	return &n
}

// verdict decides whether vr's version can stop being served (when it is
// served) or be removed (when it is not), and says why not.
func verdict(vr *VersionReport, cr CRDReport, plan *engine.Plan, opts Options) {
	var because []string
	add := func(format string, args ...any) { because = append(because, fmt.Sprintf(format, args...)) }
	if vr.Storage {
		add("it is the storage version; make another version storage first (a migration then moves the objects)")
	}
	if vr.InStoredVersions && !vr.Storage {
		if cr.MigrationInProgress {
			add("a storage migration is moving its objects to %s (status.storedVersions is %v)", cr.StorageVersion, cr.StoredVersions)
		} else {
			add("objects may still be stored at %s (status.storedVersions is %v); run orkestra storage migrate, or let orkestra run migrate them", vr.Name, cr.StoredVersions)
		}
	}
	if vr.Served && !vr.Storage {
		if !vr.Deprecated {
			add("it is not deprecated: set deprecated: true (and a deprecationWarning) on its katalog entry so that clients are warned before it goes")
		}
		if e := plan.Entry(vr.Entry); e != nil && e.Enabled {
			add("katalog entry %s watches %s, so the operator's own reads convert to it; set enabled: false on that entry", e.Name, vr.Name)
		}
		clientUse(vr, cr, opts, add)
	}
	vr.Because = because
	switch {
	case len(because) > 0:
		vr.Verdict = NotYet
	case vr.Served:
		vr.Verdict = SafeToStopServing
	default:
		vr.Verdict = SafeToRemove
	}
}

// clientUse adds the reasons the conversion counters give for keeping a
// served version: conversions to it are what a client reading or writing at
// it causes once no object is stored at it.
func clientUse(vr *VersionReport, cr CRDReport, opts Options, add func(string, ...any)) {
	c := opts.Conversions
	switch {
	case cr.Conversion != string(apiextensionsv1.WebhookConverter):
		add("the CRD converts without Orkestra's webhook (strategy %s), so Orkestra cannot see whether clients use %s; check the API server's apiserver_request_total{version=%q}", cr.Conversion, vr.Name, vr.Name)
		return
	case !c.Source.Known:
		add("whether clients still use %s is unknown: %s", vr.Name, c.Source.Error)
		return
	}
	idle := opts.Idle.String()
	if vr.LastConversionTo != nil {
		if ago := opts.Now().Sub(*vr.LastConversionTo); ago < opts.Idle {
			add("clients still use it: %.0f objects converted to %s, the last %s ago (less than --idle %s)", *vr.ConversionsTo, vr.Name, ago.Round(time.Second), idle)
		}
	}
	switch {
	case c.Source.Since == nil:
		add("the operator does not say since when it counts conversions (no process_start_time_seconds)")
	case opts.Now().Sub(*c.Source.Since) < opts.Idle:
		add("the operator has counted conversions for only %s (less than --idle %s)", opts.Now().Sub(*c.Source.Since).Round(time.Second), idle)
	}
}

// Counters are the webhook's conversion counters, summed over the
// operator's replicas.
type Counters struct {
	Source Source
	// ByPair counts objects converted, by kind and [from, to] version.
	ByPair map[string]map[[2]string]float64
	// Last is the latest conversion, by kind and [from, to] version.
	Last map[string]map[[2]string]time.Time
}

// Source says where the counters came from.
type Source struct {
	Known bool `json:"known"`
	// From lists the endpoints read.
	From []string `json:"from,omitempty"`
	// Since is when the youngest replica started counting.
	Since *time.Time `json:"countingSince,omitempty"`
	// Error says why the counters are unknown.
	Error string `json:"error,omitempty"`
}

// fill sets vr's conversion fields from the counters of kind.
func (c Counters) fill(vr *VersionReport, kind string) {
	if !c.Source.Known {
		return
	}
	var to, from float64
	for pair, n := range c.ByPair[kind] {
		if pair[1] == vr.Name {
			to += n
		}
		if pair[0] == vr.Name {
			from += n
		}
	}
	vr.ConversionsTo, vr.ConversionsFrom = &to, &from
	for pair, t := range c.Last[kind] {
		if pair[1] == vr.Name && (vr.LastConversionTo == nil || t.After(*vr.LastConversionTo)) {
			vr.LastConversionTo = &t
		}
	}
}

// Summary is a one-line account of a CRD, for the text output.
func (cr CRDReport) Summary() string {
	if cr.Error != "" {
		return fmt.Sprintf("%s: %s", cr.Name, cr.Error)
	}
	objects := "unknown"
	if cr.Objects != nil {
		objects = fmt.Sprint(*cr.Objects)
	}
	s := fmt.Sprintf("%s (%s): storage %s, storedVersions [%s], %s objects, conversion %s", cr.Name, cr.Kind, cr.StorageVersion, strings.Join(cr.StoredVersions, " "), objects, cr.Conversion)
	if cr.MigrationInProgress {
		s += ", storage migration in progress"
	}
	return s
}
