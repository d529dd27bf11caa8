package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// deprecationChecks asserts, for every version the katalog marks deprecated,
// that the API server answers a request at it with a Warning header carrying
// the katalog's deprecationWarning (or, without one, the API server's
// default "<group>/<version> <Kind> is deprecated"), and that a request at
// the storage version carries none.
func (a *apiRun) deprecationChecks(ctx context.Context, ci *crdInfo) {
	if a.plan.Katalog == nil {
		return
	}
	for _, v := range ci.versions {
		deprecated, warning := a.plan.Katalog.Deprecation(ci.crd, v)
		if !deprecated {
			continue
		}
		c := a.begin(GroupAPIServer, fmt.Sprintf("deprecation warning %s %s", ci.plural, v))
		got, err := a.warningsAt(ctx, ci, v)
		switch {
		case err != nil:
			c.failf("listing %s at %s: %v", ci.plural, v, err)
		case len(got) != 1:
			c.failf("a list at the deprecated version %s got %d Warning headers %q, want 1", v, len(got), got)
		case warning != nil && got[0] != *warning:
			c.failf("the Warning header at %s is %q, want the katalog's deprecationWarning %q", v, got[0], *warning)
		case warning == nil && !strings.HasPrefix(got[0], fmt.Sprintf("%s %s is deprecated", ci.gv(v), ci.gk.Kind)):
			c.failf("the Warning header at %s is %q, want the API server's default %q…", v, got[0], fmt.Sprintf("%s %s is deprecated", ci.gv(v), ci.gk.Kind))
		default:
			c.pass()
			c.Note = fmt.Sprintf("Warning: %q", got[0])
		}
		if dep, _ := a.plan.Katalog.Deprecation(ci.crd, ci.storage); !dep {
			if got, err := a.warningsAt(ctx, ci, ci.storage); err != nil || len(got) != 0 {
				c.failf("a list at the storage version %s: warnings %q, error %v; want none", ci.storage, got, err)
			}
		}
		a.end(c)
	}
}

// warningsAt lists ci's objects at version v and returns the Warning
// headers of the answer.
func (a *apiRun) warningsAt(ctx context.Context, ci *crdInfo, v string) ([]string, error) {
	rec := &warnings{}
	cfg := rest.CopyConfig(a.env.Config)
	cfg.WarningHandler = rec
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := dyn.Resource(ci.gvr(v))
	if ci.namespaced {
		_, err = r.Namespace(a.ns).List(ctx, metav1.ListOptions{})
	} else {
		_, err = r.List(ctx, metav1.ListOptions{})
	}
	return rec.list(), err
}

// warnings records Warning headers.
type warnings struct {
	mu  sync.Mutex
	all []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	w.all = append(w.all, text)
	w.mu.Unlock()
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.all...)
}
