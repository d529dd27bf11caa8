package katalog

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

func (d *decoder) resource(hook, kind string, index int, n *yaml.Node, path string) *Resource {
	spec := ResourceKinds[kind]
	n = Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errorf(n, path, "a %s entry must be a map of fields, got %s", kind, describe(orNode(n, &yaml.Node{})))
		return nil
	}
	r := &Resource{Kind: kind, Hook: hook, Index: index, Pos: d.pos(n), Fields: &Value{Kind: MapValue, Pos: d.pos(n), Node: n}, path: path}
	known := append(spec.FieldNames(), ControlKeys...)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		fpath := join(path, key)
		if line, dup := seen[key]; dup {
			d.errorf(k, fpath, "duplicate key %q (first at line %d); remove one", key, line)
			continue
		}
		seen[key] = k.Line
		switch key {
		case "when":
			r.When = d.when(v, fpath)
		case "or", "anyOf":
			if r.Or != nil {
				d.errorf(k, fpath, "both or and its older name anyOf are set; keep or")
			}
			r.Or = d.when(v, fpath)
		case "reconcile":
			r.Reconcile = d.reconcileKey(hook, kind, v, fpath)
		case "prune":
			r.Prune = d.pruneKey(hook, v, fpath)
		case "once":
			r.Once = d.boolean(v, fpath)
			if r.Once && kind != "secrets" {
				d.errorf(k, fpath, "once: true applies to secrets only (a generated value frozen after creation)")
			}
		case "forEach":
			r.ForEach = d.forEach(v, fpath)
		case "autoscale":
			r.Autoscale = d.autoscale(kind, k, v, fpath)
		case "forceConflict":
			fc := d.boolean(v, fpath)
			r.ForceConflict = &fc
		case "rotateAfter":
			r.RotateAfterPos = d.pos(v)
			if s := d.str(v, fpath); isExpression(s) {
				// A motif may take it from an input bound to a literal;
				// resolved when the motif is imported (inputs.go).
				r.rotateAfterExpr = s
				continue
			}
			dur, err := ParseLifetime(d.str(v, fpath))
			if err != nil {
				d.errorf(v, fpath, "%v (or never)", err)
			}
			r.RotateAfter = dur
		default:
			if d.readiness(r, k, v, fpath) {
				continue
			}
			if contains(unimplementedResourceKeys, key) {
				if msg, ok := resourceKeyErrors[key]; ok {
					d.errorf(k, fpath, "%q is part of the original katalog format but not supported by this runtime: %s", key, msg)
				} else {
					d.upstream(k, v, fpath, key)
				}
				continue
			}
			if spec.Open && d.customKey(r, k, v, fpath) {
				continue
			}
			if _, ok := spec.Fields[key]; !ok && !spec.Open {
				d.errorf(k, fpath, "unknown field %q for %s%s", key, kind, didYouMeanOrList(key, known))
				continue
			}
			val := d.value(v, fpath)
			if key == "labels" || key == "annotations" || key == "podLabels" || key == "podAnnotations" || key == "nodeSelector" {
				val = d.keyValueList(val, fpath)
			}
			if prev := r.Fields.Entry(key); prev != nil {
				d.errorf(k, fpath, "the %s is given twice: here and at %s; keep one", key, prev.KeyPos)
				continue
			}
			r.Fields.Map = append(r.Fields.Map, &MapEntry{Key: key, KeyPos: d.pos(k), Value: val})
		}
	}
	if (r.RotateAfter > 0 || r.rotateAfterExpr != "") && !r.Once {
		d.errorf(n, path+".rotateAfter", "rotateAfter needs once: true (only generated secrets rotate)")
	}
	d.checkCopy(r, path)
	if r.nameOnly = hook == OnDelete && onlyKeys(n, "name", "namespace") && r.Fields.Get("name") != nil; r.nameOnly {
		// Upstream deletes the named object; onDeleteNames decides.
		return r
	}
	for _, req := range spec.Required {
		if r.Fields.Get(req) == nil {
			d.errorf(n, path, "%s needs %q", kind, req)
		}
	}
	if spec.Open {
		d.checkCustomType(r, path)
	}
	return r
}

// keyValueList normalises the older `- key: k / value: v` label list into a map.
func (d *decoder) keyValueList(v *Value, path string) *Value {
	if v.Kind != ListValue {
		return v
	}
	out := &Value{Kind: MapValue, Pos: v.Pos, Node: v.Node}
	for i, item := range v.List {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		if item.Kind != MapValue {
			d.errorf(item.Node, ipath, "a list of labels needs `- key: … / value: …` entries")
			continue
		}
		key, val := item.Get("key"), item.Get("value")
		for _, e := range item.Map {
			if e.Key != "key" && e.Key != "value" {
				d.errorf(item.Node, ipath+"."+e.Key, "unknown key %q in a key/value entry%s", e.Key, DidYouMean(e.Key, []string{"key", "value"}))
			}
		}
		if key == nil || key.Kind != StringValue && key.Kind != IntValue && key.Kind != BoolValue {
			d.errorf(item.Node, ipath, "a key/value entry needs a scalar `key:`")
			continue
		}
		if val == nil {
			val = &Value{Kind: StringValue, Scalar: "", Pos: item.Pos}
		}
		out.Map = append(out.Map, &MapEntry{Key: key.Str, KeyPos: key.Pos, Value: val})
	}
	return out
}
