package simulate

import (
	"errors"
	"strings"
	"testing"
)

func TestRuleMatches(t *testing.T) {
	created := Op{Cycle: 1, Verb: "create", Resource: "deployments", Name: "web", Created: true}
	applyCreated := Op{Cycle: 1, Verb: "apply", Resource: "services", Name: "web", Created: true}
	applied := Op{Cycle: 2, Verb: "apply", Resource: "services", Name: "web"}
	failedCreate := Op{Cycle: 1, Verb: "create", Resource: "jobs", Name: "x", Failed: true}
	failedUpdate := Op{Cycle: 1, Verb: "update", Resource: "deployments", Name: "web", Failed: true}
	missed := Op{Cycle: 1, Verb: "get", Resource: "deployments", Name: "web", Failed: true}
	status := Op{Cycle: 1, Verb: "patch", Resource: "websites", Subresource: "status", Name: "shop"}
	patched := Op{Cycle: 1, Verb: "patch", Resource: "websites", Name: "shop"}
	cases := []struct {
		name string
		rule Rule
		op   Op
		want bool
	}{
		{"create matches a create", Rule{Verb: "create", Resource: "deployments"}, created, true},
		{"create matches an apply that created", Rule{Verb: "create", Resource: "services"}, applyCreated, true},
		{"create does not match an apply of an existing object", Rule{Verb: "create", Resource: "services"}, applied, false},
		{"apply matches an apply that created", Rule{Verb: "apply", Resource: "services"}, applyCreated, true},
		{"apply does not match a create", Rule{Verb: "apply", Resource: "deployments"}, created, false},
		{"a failed create created nothing", Rule{Verb: "create", Resource: "jobs"}, failedCreate, false},
		{"a failed update did not happen", Rule{Verb: "update", Resource: "deployments"}, failedUpdate, false},
		{"get matches a get that found nothing", Rule{Verb: "get", Resource: "deployments"}, missed, true},
		{"cycle", Rule{Cycle: 2, Verb: "apply", Resource: "services"}, applyCreated, false},
		{"name", Rule{Verb: "create", Resource: "deployments", Name: "other"}, created, false},
		{"plural/status matches a status write", Rule{Verb: "patch", Resource: "websites/status"}, status, true},
		{"status matches any status write", Rule{Verb: "patch", Resource: "status", Name: "shop"}, status, true},
		{"the plural alone is the object, not its status", Rule{Verb: "patch", Resource: "websites"}, status, false},
		{"status does not match the object", Rule{Verb: "patch", Resource: "status"}, patched, false},
		{"absent without a verb: any write", Rule{Resource: "deployments"}, created, true},
		{"absent without a verb: not a read", Rule{Resource: "deployments"}, missed, false},
		{"absent without a verb: not a failed write", Rule{Resource: "deployments"}, failedUpdate, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.matches(tc.op); got != tc.want {
				t.Errorf("%s matches %+v = %v, want %v", tc.rule, tc.op, got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	yes := true
	three, two := 3, 2
	steadyAt3 := &EntryResult{Entry: "web", Objects: []string{"default/shop"}, SteadyAt: 3, Cycles: []Cycle{
		{N: 1, Ops: []Op{{Cycle: 1, Verb: "create", Resource: "deployments", Name: "shop", Created: true}, {Cycle: 1, Verb: "create", Resource: "services", Name: "shop", Created: true}}},
		{N: 2, Ops: []Op{{Cycle: 2, Verb: "get", Resource: "deployments", Name: "shop"}, {Cycle: 2, Verb: "patch", Resource: "shops", Subresource: "status", Name: "shop"}}},
		{N: 3, Ops: []Op{{Cycle: 3, Verb: "get", Resource: "deployments", Name: "shop"}}, Errors: []error{errors.New("boom")}},
	}}
	never := &EntryResult{Entry: "web", Objects: []string{"default/shop"}, Cycles: steadyAt3.Cycles}
	idle := &EntryResult{Entry: "idle", Cycles: []Cycle{{N: 1}, {N: 2}}}
	cases := []struct {
		name   string
		res    *EntryResult
		expect *Expect
		fails  []string // What of each failure, in order
		says   string
	}{
		{"all hold", steadyAt3, &Expect{Steady: &yes, SteadyAt: &three, Ops: []Rule{{Field: "o0", Cycle: 1, Verb: "create", Resource: "services"}}, Absent: []Rule{{Field: "a0", Resource: "jobs"}}}, nil, ""},
		{"not steady", never, &Expect{Steady: &yes}, []string{"steady"}, "no steady state in 3 cycles"},
		{"steady too late", steadyAt3, &Expect{SteadyAt: &two}, []string{"steadyAt"}, "steady state at cycle 3, expected by cycle 2"},
		{"steadyAt without a steady state", never, &Expect{SteadyAt: &three}, []string{"steadyAt"}, "no steady state in 3 cycles, expected by cycle 3"},
		{"errors", steadyAt3, &Expect{NoErrors: true}, []string{"noErrors"}, "cycle 3: the reconcile failed: boom"},
		{"missing op", steadyAt3, &Expect{Ops: []Rule{{Field: "o0", Cycle: 2, Verb: "create", Resource: "deployments"}}}, []string{"o0"}, "no op matches cycle 2: create deployments"},
		{"count", steadyAt3, &Expect{Ops: []Rule{{Field: "o0", Verb: "get", Resource: "deployments", Count: 3}}}, []string{"o0"}, "2 op(s) match any cycle: get deployments (at least 3), want at least 3"},
		{"absent op present", steadyAt3, &Expect{Absent: []Rule{{Field: "a0", Resource: "services", Name: "shop"}}}, []string{"a0"}, "expected no op matching any cycle: any write: services/shop, found 1"},
		{"an entry without custom resources is not judged", idle, &Expect{Steady: &yes, Ops: []Rule{{Field: "o0", Verb: "create", Resource: "jobs"}}}, nil, ""},
		{"unless crds names it", idle, &Expect{CRDs: map[string]*Expect{"idle": {Steady: &yes}}}, []string{whatReconciled}, "reconciled no custom resource"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(&Result{Entries: []*EntryResult{tc.res}}, tc.expect)
			var whats []string
			var msgs []string
			for _, f := range got {
				whats = append(whats, f.What)
				msgs = append(msgs, f.Message)
			}
			if strings.Join(whats, ",") != strings.Join(tc.fails, ",") {
				t.Fatalf("failures %v (%v), want %v", whats, msgs, tc.fails)
			}
			if tc.says != "" && !strings.Contains(strings.Join(msgs, "\n"), tc.says) {
				t.Errorf("messages %q do not say %q", msgs, tc.says)
			}
		})
	}
}

func TestCheckMissingOpShowsItsCycle(t *testing.T) {
	er := &EntryResult{Entry: "web", Objects: []string{"default/shop"}, Cycles: []Cycle{
		{N: 1, Ops: []Op{{Cycle: 1, Verb: "get", Resource: "deployments", Name: "shop", Failed: true}, {Cycle: 1, Verb: "create", Resource: "deployments", Name: "shop", Created: true}}},
	}}
	got := Check(&Result{Entries: []*EntryResult{er}}, &Expect{Ops: []Rule{{Field: "o0", Cycle: 1, Verb: "apply", Resource: "deployments", Name: "shop"}}})
	if len(got) != 1 || len(got[0].Ops) != 2 {
		t.Fatalf("failures = %+v, want one showing the 2 ops of cycle 1", got)
	}
	var b strings.Builder
	printChecks(&b, &Expect{Ops: []Rule{{Field: "o0", Cycle: 1, Verb: "apply", Resource: "deployments", Name: "shop"}}}, got)
	for _, want := range []string{"✗ cycle 1: apply deployments/shop", "cycle 1: get deployments/shop (failed)", "cycle 1: create deployments/shop", "FAIL"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output\n%s\ndoes not show %q", b.String(), want)
		}
	}
}
