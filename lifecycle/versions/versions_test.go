package versions

import (
	"slices"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

func ptr[T any](v T) *T { return &v }

func TestVerdicts(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	known := Counters{Source: Source{Known: true, Since: ptr(now.Add(-48 * time.Hour))}}
	webhookCRD := CRDReport{StorageVersion: "v2", StoredVersions: []string{"v2"}, Conversion: "Webhook"}
	plan := &engine.Plan{}
	cases := []struct {
		name     string
		v        VersionReport
		crd      CRDReport
		counters Counters
		verdict  string
		because  []string
	}{
		{"the storage version", VersionReport{Name: "v2", Served: true, Storage: true, InStoredVersions: true}, webhookCRD, known, NotYet,
			[]string{"it is the storage version; make another version storage first (a migration then moves the objects)"}},
		{"deprecated, idle, not stored", VersionReport{Name: "v1", Served: true, Deprecated: true}, webhookCRD, known, SafeToStopServing, nil},
		{"not served, not stored", VersionReport{Name: "v1"}, webhookCRD, known, SafeToRemove, nil},
		{"still stored", VersionReport{Name: "v1", InStoredVersions: true}, CRDReport{StorageVersion: "v2", StoredVersions: []string{"v1", "v2"}, Conversion: "Webhook"}, known, NotYet,
			[]string{"objects may still be stored at v1 (status.storedVersions is [v1 v2]); run orkestra storage migrate, or let orkestra run migrate them"}},
		{"a migration is running", VersionReport{Name: "v1", InStoredVersions: true}, CRDReport{StorageVersion: "v2", StoredVersions: []string{"v1", "v2"}, MigrationInProgress: true}, known, NotYet,
			[]string{"a storage migration is moving its objects to v2 (status.storedVersions is [v1 v2])"}},
		{"no webhook", VersionReport{Name: "v1", Served: true, Deprecated: true}, CRDReport{StorageVersion: "v2", StoredVersions: []string{"v2"}, Conversion: "None"}, known, NotYet,
			[]string{`the CRD converts without Orkestra's webhook (strategy None), so Orkestra cannot see whether clients use v1; check the API server's apiserver_request_total{version="v1"}`}},
		{"counters unknown", VersionReport{Name: "v1", Served: true, Deprecated: true}, webhookCRD, Counters{Source: Source{Error: "no running operator pod"}}, NotYet,
			[]string{"whether clients still use v1 is unknown: no running operator pod"}},
		{"used an hour ago", VersionReport{Name: "v1", Served: true, Deprecated: true, ConversionsTo: ptr(3.0), LastConversionTo: ptr(now.Add(-time.Hour))}, webhookCRD, known, NotYet,
			[]string{"clients still use it: 3 objects converted to v1, the last 1h0m0s ago (less than --idle 24h0m0s)"}},
		{"counting for an hour only", VersionReport{Name: "v1", Served: true, Deprecated: true}, webhookCRD, Counters{Source: Source{Known: true, Since: ptr(now.Add(-time.Hour))}}, NotYet,
			[]string{"the operator has counted conversions for only 1h0m0s (less than --idle 24h0m0s)"}},
		{"start time unknown", VersionReport{Name: "v1", Served: true, Deprecated: true}, webhookCRD, Counters{Source: Source{Known: true}}, NotYet,
			[]string{"the operator does not say since when it counts conversions (no process_start_time_seconds)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.v
			verdict(&v, tc.crd, plan, Options{Conversions: tc.counters, Idle: DefaultIdle, Now: func() time.Time { return now }})
			if v.Verdict != tc.verdict || !slices.Equal(v.Because, tc.because) {
				t.Errorf("verdict %q because %q\nwant %q because %q", v.Verdict, v.Because, tc.verdict, tc.because)
			}
		})
	}
}

func TestParseSumsReplicas(t *testing.T) {
	page1 := `# TYPE orkestra_conversion_requests_total counter
orkestra_conversion_requests_total{from_version="v2",kind="Gizmo",result="success",to_version="v1"} 3
orkestra_conversion_requests_total{from_version="v1",kind="Gizmo",result="success",to_version="v2"} 1
# TYPE orkestra_conversion_last_timestamp_seconds gauge
orkestra_conversion_last_timestamp_seconds{from_version="v2",kind="Gizmo",to_version="v1"} 1000.5
# TYPE process_start_time_seconds gauge
process_start_time_seconds 100
`
	page2 := `# TYPE orkestra_conversion_requests_total counter
orkestra_conversion_requests_total{from_version="v2",kind="Gizmo",result="failure",to_version="v1"} 2
# TYPE orkestra_conversion_last_timestamp_seconds gauge
orkestra_conversion_last_timestamp_seconds{from_version="v2",kind="Gizmo",to_version="v1"} 900
# TYPE process_start_time_seconds gauge
process_start_time_seconds 200
`
	c := parse([]page{{from: "a", body: []byte(page1)}, {from: "b", body: []byte(page2)}})
	if !c.Source.Known || !slices.Equal(c.Source.From, []string{"a", "b"}) {
		t.Fatalf("source %+v", c.Source)
	}
	if got := c.ByPair["Gizmo"][[2]string{"v2", "v1"}]; got != 5 {
		t.Errorf("v2→v1 = %v, want 5 (both results, both replicas)", got)
	}
	if got := c.Last["Gizmo"][[2]string{"v2", "v1"}]; !got.Equal(time.Unix(1000, 5e8)) {
		t.Errorf("last v2→v1 = %v, want the later of the two", got)
	}
	if c.Source.Since == nil || !c.Source.Since.Equal(time.Unix(200, 0)) {
		t.Errorf("counting since %v, want the younger replica's start (200)", c.Source.Since)
	}
	v := VersionReport{Name: "v1"}
	c.fill(&v, "Gizmo")
	if *v.ConversionsTo != 5 || *v.ConversionsFrom != 1 || !v.LastConversionTo.Equal(time.Unix(1000, 5e8)) {
		t.Errorf("v1: to %v from %v last %v", *v.ConversionsTo, *v.ConversionsFrom, v.LastConversionTo)
	}
	if bad := parse([]page{{from: "x", body: []byte("not { metrics")}}); bad.Source.Known || bad.Source.Error == "" {
		t.Errorf("garbage parsed: %+v", bad.Source)
	}
}
