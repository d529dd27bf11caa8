package migrate

import (
	"math/rand/v2"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/objgen"
)

// liveViewCount is how many generated live inputs an expression that reads
// cross reads or external results is verified with (besides "nothing read,
// no call made").
const liveViewCount = 16

// liveViews are the live inputs an expression that reads them is verified
// with, nil when it reads none: nothing read and no call made (before the
// first reconcile, or skipped calls), then samples — cross reads finding
// objects generated from the observed CRD's schema (lists of 0 to 3), and
// each call succeeding with a text or a JSON body generated from its
// schema, failing with a status, or failing without a response.
func (m *migration) liveViews(ctx *engine.Context, seed int64) []*engine.Live {
	var cross, ext *structuralschema.Structural
	for _, v := range ctx.Vars {
		switch v.Name {
		case engine.CrossVar:
			cross = v.Schema
		case engine.ExternalVar:
			ext = v.Schema
		}
	}
	if cross == nil && ext == nil {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 26))
	none := map[string]engine.ExternalResult{}
	if ext != nil {
		for name := range ext.Properties {
			none[name] = engine.ExternalResult{}
		}
	}
	var crossNone map[string][]map[string]any
	lists, remote := map[string]bool{}, map[string]bool{}
	if cross != nil {
		crossNone = map[string][]map[string]any{}
		for as, s := range cross.Properties {
			crossNone[as], lists[as], remote[as] = nil, s.Type == "array", s.Title == engine.RemoteTitle
		}
	}
	views := []*engine.Live{engine.SampleLive(crossNone, lists, remote, none)}
	for i := 0; i < liveViewCount; i++ {
		found := map[string][]map[string]any{}
		if cross != nil {
			for as, s := range cross.Properties {
				item, n := &s, 1
				if s.Type == "array" {
					item, n = s.Items, rng.IntN(4)
				}
				found[as] = generated(item, n, seed+int64(i), i%2 == 0)
			}
		}
		results := map[string]engine.ExternalResult{}
		if ext != nil {
			for name, s := range ext.Properties {
				js := s.Properties["json"]
				results[name] = sampleResult(&js, (i+len(name))%5, seed+int64(i), rng)
			}
		}
		views = append(views, engine.SampleLive(found, lists, remote, results))
	}
	return views
}

// generated returns n objects of schema s (every declared field when full).
func generated(s *structuralschema.Structural, n int, seed int64, full bool) []map[string]any {
	if n == 0 || s == nil {
		return nil
	}
	p := 0.0
	if full {
		p = 1
	}
	objs, err := objgen.TryGenerate(s, schema.GroupVersionKind{Kind: "Observed"}, n, objgen.Options{Seed: seed, OptionalProbability: p})
	if err != nil {
		return []map[string]any{{"metadata": map[string]any{"name": "sample"}, "spec": map[string]any{}, "status": map[string]any{}}}
	}
	return objs
}

// sampleResult is one of five outcomes of a call: not made, a text body, a
// JSON body (generated from its schema, or a fixed sample when it has
// none), an error status, no response.
func sampleResult(js *structuralschema.Structural, kind int, seed int64, rng *rand.Rand) engine.ExternalResult {
	switch kind {
	case 0:
		return engine.ExternalResult{}
	case 1:
		return engine.ExternalResult{Called: true, Status: 200, Body: []string{"ok", "true", "false", " spaced ", ""}[rng.IntN(5)]}
	case 2:
		var v any = map[string]any{"level": int64(3), "enabled": true, "name": "x"}
		if js != nil && js.Type == "object" {
			if objs := generated(js, 1, seed, rng.IntN(2) == 0); len(objs) > 0 {
				v = objs[0]
			}
		}
		b, _ := jsonval.Append(nil, v)
		return engine.ExternalResult{Called: true, Status: 200, Body: string(b), JSON: v, HasJSON: true}
	case 3:
		return engine.ExternalResult{Called: true, Status: []int{404, 500, 503}[rng.IntN(3)], Body: "down", Error: "HTTP 500"}
	}
	return engine.ExternalResult{Called: true, Error: "GET http://example.com: no response within the timeout of 5s"}
}
