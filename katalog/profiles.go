package katalog

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Profiles are named presets (upstream: pkg/profiles, pkg/types/
// types_profiles.go): `resources: {profile: small}` stands for the requests
// and limits of small. They expand when the katalog loads into the fields
// they stand for (profiles_expand.go), so render shows the expanded object,
// the CEL type checker sees it and the runtime never sees a profile name.
// A katalog, a Komposer and a motif may define their own under a top-level
// `profiles:`; one of those overrides a built-in of the same name, and a
// name defined twice is an error (upstream's ProfileRegistry.Merge). A
// built-in name matches in any case, a defined one exactly.

// profileClass is one class of presets: where it is used, the fields a
// preset defines, and the built-ins.
type profileClass struct {
	// Key is the class's key under profiles:.
	Key string
	// What names a preset of the class in messages.
	What string
	// Fields a defined preset may hold besides name and description.
	Fields   []string
	Builtins builtins
}

var profileClasses = []*profileClass{
	{Key: "resources", What: "resource profile", Fields: []string{"requests", "limits"}, Builtins: builtinResources},
	{Key: "probes", What: "probe profile", Fields: probeTimingKeys, Builtins: builtinProbes},
	{Key: "containerSecurity", What: "container security profile",
		Fields:   []string{"allowPrivilegeEscalation", "readOnlyRootFilesystem", "runAsNonRoot", "runAsUser", "runAsGroup", "capabilities"},
		Builtins: builtinContainerSecurity},
	{Key: "podSecurity", What: "pod security profile", Fields: []string{"runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup"}, Builtins: builtinPodSecurity},
	{Key: "rollingUpdate", What: "rolling update profile", Fields: []string{"maxSurge", "maxUnavailable"}, Builtins: builtinRollingUpdate},
	{Key: "pdb", What: "PodDisruptionBudget profile", Fields: []string{"minAvailable", "maxUnavailable"}, Builtins: builtinPDB},
	{Key: "hpa", What: "HorizontalPodAutoscaler profile",
		Fields:   []string{"targetCPUUtilizationPercentage", "behavior", "minReplicas", "maxReplicas"},
		Builtins: builtinHPA},
	{Key: "networkPolicies", What: "NetworkPolicy profile", Fields: []string{"podSelector", "ingress", "egress", "policyTypes"}, Builtins: builtinNetworkPolicies},
	{Key: "resourceQuotas", What: "ResourceQuota profile", Fields: []string{"hard"}, Builtins: builtinResourceQuotas},
	{Key: "limitRanges", What: "LimitRange profile", Fields: []string{"limits"}},
	{Key: "reconciler", What: "reconciler profile", Fields: []string{"workers", "resync", "queue"}, Builtins: builtinReconciler},
}

var probeTimingKeys = []string{"initialDelaySeconds", "periodSeconds", "failureThreshold", "successThreshold", "timeoutSeconds"}

func classOf(key string) *profileClass {
	for _, c := range profileClasses {
		if c.Key == key {
			return c
		}
	}
	panic("katalog: no profile class " + key)
}

// Profile is one preset a katalog, Komposer or motif defines.
type Profile struct {
	Class, Name, Description string
	// Fields are the preset's fields (a map value, positioned where they
	// are written).
	Fields *Value
	Pos    Pos
}

// profiles decodes a top-level `profiles:` block into the load's registry.
func (d *decoder) profiles(n *yaml.Node, path string) {
	var keys []string
	for _, c := range profileClasses {
		keys = append(keys, c.Key)
	}
	o := d.mapping(n, path, append(keys, "include"), nil)
	if f, ok := o["include"]; ok {
		// A fragment holding a profiles: block, read before this one's
		// (upstream's ExpandProfileInclude).
		if fd, root := d.fragment(f.value, path+".include", "profiles fragment"); root != nil {
			fo := fd.mapping(root, "", []string{"profiles"}, nil)
			if !fo.has("profiles") {
				fd.errorf(root, "profiles", "a profiles fragment needs `profiles:`")
			} else {
				fd.profiles(fo["profiles"].value, "profiles")
			}
		}
	}
	l := d.loader
	for _, c := range profileClasses {
		f, ok := o[c.Key]
		if !ok {
			continue
		}
		list := Resolve(f.value)
		if list == nil || list.Kind != yaml.SequenceNode {
			d.errorf(f.value, path+"."+c.Key, "must be a list of `- name: …` %ss, got %s", c.What, describe(orNode(list, f.key)))
			continue
		}
		for i, item := range list.Content {
			ipath := fmt.Sprintf("%s.%s[%d]", path, c.Key, i)
			po := d.mapping(item, ipath, append([]string{"name", "description"}, c.Fields...), nil)
			name := d.str(po["name"].value, ipath+".name")
			if name == "" {
				d.errorf(item, ipath, "a %s needs `name:`", c.What)
				continue
			}
			p := &Profile{Class: c.Key, Name: name, Description: d.str(po["description"].value, ipath+".description"),
				Fields: &Value{Kind: MapValue, Pos: d.pos(Resolve(item)), Node: Resolve(item)}, Pos: d.pos(po["name"].value)}
			for _, k := range c.Fields {
				if fv, ok := po[k]; ok {
					p.Fields.Map = append(p.Fields.Map, &MapEntry{Key: k, KeyPos: d.pos(fv.key), Value: d.value(fv.value, ipath+"."+k)})
				}
			}
			if l.profiles[c.Key] == nil {
				l.profiles[c.Key] = map[string]*Profile{}
			}
			if prev := l.profiles[c.Key][name]; prev != nil {
				if prev.Pos != p.Pos { // (not the same motif imported twice)
					d.errorf(po["name"].value, ipath+".name", "%s %q is defined twice: here and at %s; rename one", c.What, name, prev.Pos)
				}
				continue
			}
			l.profiles[c.Key][name] = p
		}
	}
}

// profileLookup finds a profile of class by its literal name: one the
// katalog defines (exact name), else a built-in (any case). The result is
// the fields it stands for, positioned at pos.
func (l *loader) profileLookup(c *profileClass, name string, pos Pos) (*Value, bool) {
	if p := l.profiles[c.Key][name]; p != nil {
		return p.Fields, true
	}
	if b, ok := c.Builtins[strings.ToLower(name)]; ok {
		return literalValue(b, pos), true
	}
	return nil, false
}

// profileNames lists the profiles of a class (built-ins, then defined).
func (l *loader) profileNames(c *profileClass) (builtin, defined []string) {
	for n := range c.Builtins {
		builtin = append(builtin, n)
	}
	for n := range l.profiles[c.Key] {
		defined = append(defined, n)
	}
	sort.Strings(builtin)
	sort.Strings(defined)
	return builtin, defined
}

// unknownProfile says which profiles of the class exist.
func (l *loader) unknownProfile(c *profileClass, name string) string {
	builtin, defined := l.profileNames(c)
	msg := fmt.Sprintf("unknown %s %q", c.What, name)
	if len(builtin) > 0 {
		msg += "; built-in: " + strings.Join(builtin, ", ")
	}
	if len(defined) > 0 {
		msg += "; defined under profiles." + c.Key + ": " + strings.Join(defined, ", ")
	} else {
		msg += "; define your own under profiles." + c.Key
	}
	return msg + DidYouMean(name, append(builtin, defined...))
}

// profileCases are the cases of a profile named by an expression: every
// profile of the class, each standing for what expand makes of it.
func (l *loader) profileCases(c *profileClass, pos Pos, expand func(*Value) *Value) []SelectCase {
	builtin, defined := l.profileNames(c)
	var out []SelectCase
	for _, n := range defined {
		out = append(out, SelectCase{Name: n, Value: expand(l.profiles[c.Key][n].Fields)})
	}
	for _, n := range builtin {
		if l.profiles[c.Key][n] != nil {
			continue // the defined one overrides it
		}
		out = append(out, SelectCase{Name: n, Fold: true, Value: expand(literalValue(c.Builtins[n], pos))})
	}
	return out
}

// literalValue turns plain data (maps, lists, strings, integers, booleans)
// into a katalog value positioned at pos; map keys in sorted order.
func literalValue(x any, pos Pos) *Value {
	switch v := x.(type) {
	case map[string]any:
		out := &Value{Kind: MapValue, Pos: pos}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out.Map = append(out.Map, &MapEntry{Key: k, KeyPos: pos, Value: literalValue(v[k], pos)})
		}
		return out
	case []any:
		out := &Value{Kind: ListValue, Pos: pos, List: []*Value{}}
		for _, item := range v {
			out.List = append(out.List, literalValue(item, pos))
		}
		return out
	case string:
		return &Value{Kind: StringValue, Str: v, Scalar: v, Quoted: true, Pos: pos}
	case int64:
		return &Value{Kind: IntValue, Str: fmt.Sprint(v), Scalar: v, Pos: pos}
	case bool:
		return &Value{Kind: BoolValue, Str: fmt.Sprint(v), Scalar: v, Pos: pos}
	}
	panic(fmt.Sprintf("katalog: literalValue of %T", x))
}
