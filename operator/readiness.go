package operator

import (
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Readiness of a custom resource's children (kro's readyWhen and
// dependency graph; engine/compile_ready.go compiles them). Children are
// applied wave by wave; a child whose dependsOn is not satisfied is not
// applied (not created, not updated, not deleted) and waits; after its
// apply, a child is ready when it exists and its readyWhen holds on the
// object the operator observes. The custom resource's Ready condition is
// True only when every applicable child is ready, and its message names
// those that are not. Ready once it exists is the rule of a child without
// readyWhen, as in kro.

// ReasonNotReady: every child was applied, and some are not ready yet.
// (ReasonWaiting, gates.go, says a child waits for another.)
const ReasonNotReady = "ChildrenNotReady"

// readinessRetry is how often a custom resource with children that are not
// ready is looked at again besides their changes (children in other
// namespaces or cluster-scoped carry no owner reference, so their changes
// do not reconcile it).
const readinessRetry = 10 * time.Second

// readiness is what one reconcile learnt of its children's readiness.
type readiness struct {
	// states by child (Child.Key: declarations naming one object share it).
	states map[string]childState
	// notReady describes, in apply order, the children that are not ready.
	notReady []string
	waiting  bool
}

type childState struct {
	// exists: the child was applied (it exists or was just made).
	exists, ready bool
}

// byWave orders children for applying: by their declaration's wave, in
// declaration order within a wave.
func byWave(children []*render.Child) []*render.Child {
	out := append([]*render.Child(nil), children...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Resource.Wave < out[j].Resource.Wave })
	return out
}

// waits reports what a child's dependsOn still waits for ("" when nothing):
// every applicable child of a declaration it needs must be ready (or, for
// created, exist). A declaration none of whose children applies (its
// condition does not hold, no forEach item) holds nothing back.
func (a *applier) waits(c *render.Child, res *render.Result) string {
	var waits []string
	for _, n := range c.Resource.Needs {
		var pending []string
		for _, h := range render.ApplyHooks {
			for _, o := range res.Hooks[h] {
				if o.Resource != n.On || !o.When || !a.e.entry.Namespaces.Permits(o.Namespace) {
					continue
				}
				st := a.ready.states[o.Key()]
				if ok := st.ready || n.Condition == katalog.DependencyCreated && st.exists; !ok {
					pending = append(pending, o.String())
				}
			}
		}
		if len(pending) > 0 {
			waits = append(waits, fmt.Sprintf("%s to be %s (%s)", n.On.Source.ID, n.Condition, strings.Join(pending, ", ")))
		}
	}
	if len(waits) == 0 {
		return ""
	}
	return "waits for " + strings.Join(waits, " and ")
}

// holdBack records a child that waits for its dependsOn.
func (a *applier) holdBack(c *render.Child, why string) {
	a.ready.waiting = true
	a.ready.states[c.Key()] = childState{}
	a.ready.notReady = append(a.ready.notReady, c.String()+" "+why)
}

// observeReady records the readiness of a child just applied: its
// readyWhen on the object the cache holds.
func (a *applier) observeReady(c *render.Child) {
	st := childState{exists: true, ready: true}
	if c.Resource.ReadyWhen != nil {
		st.ready = false
		if why := a.evalReady(c); why != "" {
			a.ready.notReady = append(a.ready.notReady, c.String()+": "+why)
		} else {
			st.ready = true
		}
	}
	a.ready.states[c.Key()] = st
}

// evalReady evaluates a child's readyWhen; "" when it holds, else why not.
func (a *applier) evalReady(c *render.Child) string {
	live, err := a.get(c)
	switch {
	case apierrors.IsNotFound(err) && c.Kind == "jobs" && jobSet(a.cr)[c.Namespace+"/"+c.Name]:
		return "" // it ran, and is gone (ttlSecondsAfterFinished)
	case apierrors.IsNotFound(err):
		return "not observed yet"
	case err != nil:
		return "cannot be read: " + err.Error()
	}
	obj, err := a.observed(live, c)
	if err != nil {
		return "cannot be read: " + err.Error()
	}
	ok, err := c.Ready(obj)
	switch {
	case err != nil:
		return fmt.Sprintf("readyWhen cannot be evaluated: %v", err)
	case !ok:
		return fmt.Sprintf("readyWhen %s does not hold", describeCondition(c.Resource.ReadyWhen))
	}
	return ""
}

// observed is the map form of a live child, as read-back gives it.
func (a *applier) observed(live client.Object, c *render.Child) (map[string]any, error) {
	if u, ok := live.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	return a.e.views.of(live, c.GVK)
}

// describeCondition is a condition's source for messages.
func describeCondition(cond engine.Condition) string {
	return "`" + strings.TrimSpace(cond.Source()) + "`"
}

// readyCondition is the Ready condition of a reconcile that applied its
// children: True with the summary when every applicable child is ready,
// else False naming those that are not.
func (a *applier) readyCondition() metav1.Condition {
	if len(a.ready.notReady) == 0 {
		return metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonSucceeded, Message: a.summary()}
	}
	reason := ReasonNotReady
	if a.ready.waiting {
		reason = ReasonWaiting
	}
	msg := fmt.Sprintf("%d of the children not ready: %s; %s", len(a.ready.notReady), strings.Join(a.ready.notReady, "; "), a.summary())
	return metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}
