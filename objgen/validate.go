package objgen

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// Validate reports whether the API server would accept obj as a custom
// resource of schema s on create, with unknown fields rejected (as with
// fieldValidation=Strict) rather than silently dropped. Like the server, it
// validates obj after dropping nulls of non-nullable fields that have no
// default and applying defaults (obj itself is not modified). It checks:
//
//   - apiVersion and kind present and well formed; metadata decodes as
//     ObjectMeta with no unknown fields, a DNS-1123 subdomain name, valid
//     labels and annotations;
//   - no field the schema does not declare (structural pruning would drop it);
//   - the OpenAPI value validations: types, nullable, enum, minimum/maximum
//     (exclusive), multipleOf, min/maxLength, pattern, format, min/maxItems,
//     uniqueItems, min/maxProperties, required, allOf/anyOf/oneOf/not,
//     x-kubernetes-int-or-string;
//   - x-kubernetes-embedded-resource objects (apiVersion, kind, metadata);
//   - x-kubernetes-list-type set and map uniqueness;
//   - x-kubernetes-validations CEL rules (transition rules are skipped, as on
//     create), when nothing above failed.
//
// It returns nil when obj is valid, else an error listing every problem
// (a k8s.io/apimachinery/pkg/util/errors.Aggregate of *field.Error), each
// naming its field path, e.g. "spec.replicas: Invalid value: 51:
// spec.replicas in body should be less than or equal to 50".
//
// Validate compiles the schema (OpenAPI validator, CEL rules) on every call;
// NewValidator compiles it once for many objects.
func Validate(s *structuralschema.Structural, obj map[string]any) error {
	v, err := NewValidator(s)
	if err != nil {
		return err
	}
	return v.Validate(obj)
}

// Validator validates objects against one schema, compiled once. It is safe
// for concurrent use.
type Validator struct {
	c *checker
}

// NewValidator compiles s for Validator.Validate.
func NewValidator(s *structuralschema.Structural) (*Validator, error) {
	c, err := newChecker(s, true)
	if err != nil {
		return nil, fmt.Errorf("objgen: cannot build a validator for the schema: %w", err)
	}
	return &Validator{c: c}, nil
}

// Validate is the package-level Validate with the schema compiled already.
func (v *Validator) Validate(obj map[string]any) error {
	if errs := v.c.validateObject(obj); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// checker validates values of one schema node (the root or a subtree).
type checker struct {
	s       *structuralschema.Structural
	openapi validation.SchemaValidator
	cel     *cel.Validator
}

func newChecker(s *structuralschema.Structural, isResourceRoot bool) (*checker, error) {
	sch, err := openAPISchema(s)
	if err != nil {
		return nil, err
	}
	c := &checker{s: s, openapi: validation.NewSchemaValidatorFromOpenAPI(sch)}
	if s != nil {
		c.cel = cel.NewValidator(s, isResourceRoot, celconfig.PerCallLimit)
	}
	return c, nil
}

// openAPISchema turns a structural schema into the go-openapi schema the API
// server validates custom resources with, as validation.NewSchemaValidator
// builds it from a CRD: int-or-string fields typed [integer, string] and
// formats the server does not support at its compatibility version removed.
func openAPISchema(s *structuralschema.Structural) (*spec.Schema, error) {
	if s == nil {
		return &spec.Schema{}, nil
	}
	sch := s.ToKubeOpenAPI()
	post := validation.StripUnsupportedFormatsPostProcessorForVersion(environment.DefaultCompatibilityVersion())
	var walk func(x *spec.Schema) error
	walk = func(x *spec.Schema) error {
		if x == nil {
			return nil
		}
		if ios, _ := x.Extensions.GetBool("x-kubernetes-int-or-string"); ios {
			x.Type = spec.StringOrArray{"integer", "string"}
		}
		if err := post(x); err != nil {
			return err
		}
		for k, p := range x.Properties {
			if err := walk(&p); err != nil {
				return err
			}
			x.Properties[k] = p
		}
		if x.Items != nil {
			if err := walk(x.Items.Schema); err != nil {
				return err
			}
			for i := range x.Items.Schemas {
				if err := walk(&x.Items.Schemas[i]); err != nil {
					return err
				}
			}
		}
		if x.AdditionalProperties != nil {
			if err := walk(x.AdditionalProperties.Schema); err != nil {
				return err
			}
		}
		for _, list := range [][]spec.Schema{x.AllOf, x.AnyOf, x.OneOf} {
			for i := range list {
				if err := walk(&list[i]); err != nil {
					return err
				}
			}
		}
		return walk(x.Not)
	}
	if err := walk(sch); err != nil {
		return nil, err
	}
	return sch, nil
}

// validateObject checks a whole custom resource.
func (c *checker) validateObject(obj map[string]any) field.ErrorList {
	ctx := context.Background()
	var errs field.ErrorList
	errs = append(errs, validateRootTypeMeta(obj)...)
	errs = append(errs, validateRootMeta(obj)...)
	if c.s != nil {
		// What the API server validates: the object pruned (unknown fields
		// reported here), without nulls of non-nullable fields that have no
		// default, and defaulted.
		cp := deepCopyMap(obj)
		for _, p := range pruning.PruneWithOptions(cp, c.s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
			errs = append(errs, unknownField(p))
		}
		defaulting.PruneNonNullableNullsWithoutDefaults(cp, c.s)
		defaulting.Default(cp, c.s)
		obj = cp
		if ferr, paths := objectmeta.CoerceWithOptions(nil, deepCopyMap(obj), c.s, false, objectmeta.CoerceOptions{ReturnUnknownFieldPaths: true}); ferr != nil {
			errs = append(errs, ferr)
		} else {
			for _, p := range paths {
				errs = append(errs, unknownField(p))
			}
		}
		errs = append(errs, objectmeta.Validate(ctx, nil, obj, c.s, false)...)
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.s, obj)...)
	}
	errs = append(errs, validation.ValidateCustomResource(nil, obj, c.openapi)...)
	if c.cel != nil && !blocking(errs) {
		celErrs, _ := c.cel.Validate(ctx, nil, c.s, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return sortErrors(errs)
}

// validateValue checks a value of a schema node (not a whole resource): the
// OpenAPI validations, embedded resources, list types and CEL rules.
func (c *checker) validateValue(v any) field.ErrorList {
	ctx := context.Background()
	v = serverView(v, c.s)
	errs := validation.ValidateCustomResource(nil, v, c.openapi)
	if c.s != nil {
		errs = append(errs, objectmeta.Validate(ctx, nil, v, c.s, false)...)
		// ValidateListSetsAndMaps starts at an object: wrap the value in one.
		wrapper := &structuralschema.Structural{Properties: map[string]structuralschema.Structural{"v": *c.s}}
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, wrapper, map[string]any{"v": v})...)
	}
	if c.cel != nil && !blocking(errs) {
		celErrs, _ := c.cel.Validate(ctx, nil, c.s, v, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}

// serverView returns a copy of v as the API server validates it: nulls of
// non-nullable fields without a default dropped, defaults applied.
func serverView(v any, s *structuralschema.Structural) any {
	v = deepCopy(v)
	if s == nil {
		return v
	}
	// both work on the children of a map: wrap v to reach v itself
	wrapper := &structuralschema.Structural{Properties: map[string]structuralschema.Structural{"v": *s}}
	m := map[string]any{"v": v}
	defaulting.PruneNonNullableNullsWithoutDefaults(m, wrapper)
	defaulting.Default(m, wrapper)
	return m["v"]
}

func unknownField(path string) *field.Error {
	return field.Forbidden(field.NewPath(path), "unknown field: the schema does not declare it, so the API server would drop it")
}

// blocking mirrors the API server: CEL rules are not evaluated on an object
// with type, required, enum or size errors.
func blocking(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

func sortErrors(errs field.ErrorList) field.ErrorList {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

func validateRootTypeMeta(obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	switch v, ok := obj["apiVersion"]; {
	case !ok:
		errs = append(errs, field.Required(field.NewPath("apiVersion"), ""))
	default:
		if s, isString := v.(string); !isString {
			errs = append(errs, field.Invalid(field.NewPath("apiVersion"), v, "must be a string"))
		} else if gv, err := schema.ParseGroupVersion(s); err != nil || gv.Version == "" {
			errs = append(errs, field.Invalid(field.NewPath("apiVersion"), v, "must be group/version, or a version for the core group"))
		}
	}
	switch v, ok := obj["kind"]; {
	case !ok:
		errs = append(errs, field.Required(field.NewPath("kind"), ""))
	default:
		if s, isString := v.(string); !isString || s == "" {
			errs = append(errs, field.Invalid(field.NewPath("kind"), v, "must be a non-empty string"))
		}
	}
	return errs
}

func validateRootMeta(obj map[string]any) field.ErrorList {
	pth := field.NewPath("metadata")
	meta, found, unknown, err := objectmeta.GetObjectMetaWithOptions(obj, objectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(pth, obj["metadata"], err.Error())}
	case !found || meta == nil:
		return field.ErrorList{field.Required(pth, "an object needs metadata with a name")}
	}
	var errs field.ErrorList
	for _, p := range unknown {
		errs = append(errs, unknownField(p))
	}
	errs = append(errs, metavalidation.ValidateObjectMeta(meta, meta.Namespace != "", metavalidation.NameIsDNSSubdomain, pth)...)
	return errs
}

// validRootName returns why name cannot be a custom resource's name.
func validRootName(name string) []string { return metavalidation.NameIsDNSSubdomain(name, false) }

func validEmbeddedName(name string) bool {
	return name != "" && len(utilvalidation.IsDNS1123Subdomain(name)) == 0
}

func validAPIVersion(v string) bool {
	gv, err := schema.ParseGroupVersion(v)
	return v != "" && err == nil && gv.Version != ""
}

func validKind(v string) bool {
	return v != "" && len(utilvalidation.IsDNS1035Label(strings.ToLower(v))) == 0
}

// env holds what generation for one schema shares across objects: compiled
// patterns and per-node checkers. It is not safe for concurrent use.
type env struct {
	root     *structuralschema.Structural
	post     func(*spec.Schema) error
	patterns map[string]*compiledPattern
	nodes    map[string]*checker
	rootChk  *checker
}

type compiledPattern struct {
	re  *regexp.Regexp
	ast *syntax.Regexp
	err error
}

func newEnv(s *structuralschema.Structural) *env {
	return &env{
		root:     s,
		post:     validation.StripUnsupportedFormatsPostProcessorForVersion(environment.DefaultCompatibilityVersion()),
		patterns: map[string]*compiledPattern{},
		nodes:    map[string]*checker{},
	}
}

func (e *env) pattern(p string) (*compiledPattern, error) {
	if c, ok := e.patterns[p]; ok {
		return c, c.err
	}
	c := &compiledPattern{}
	c.re, c.err = regexp.Compile(p)
	if c.err == nil {
		var ast *syntax.Regexp
		ast, c.err = syntax.Parse(p, syntax.Perl)
		if c.err == nil {
			c.ast = ast.Simplify()
		}
	}
	if c.err != nil {
		c.err = fmt.Errorf("invalid pattern %q: %w", p, c.err)
	}
	e.patterns[p] = c
	return c, c.err
}

// format returns the normalized format of a string node that the API server
// checks, or "".
func (e *env) format(s *structuralschema.Structural) string {
	if s.ValueValidation == nil || s.ValueValidation.Format == "" {
		return ""
	}
	x := &spec.Schema{}
	x.Format = s.ValueValidation.Format
	if s.Type != "" {
		x.Type = spec.StringOrArray{s.Type}
	}
	if err := e.post(x); err != nil || x.Format == "" {
		return ""
	}
	if s.Type != "" && s.Type != "string" {
		return "" // int32, int64, float, double: ranges, not string formats
	}
	return strings.ReplaceAll(x.Format, "-", "")
}

// stringOK checks a candidate string against the node's string validations.
func (e *env) stringOK(s *structuralschema.Structural, v string) error {
	vv := s.ValueValidation
	if vv == nil {
		return nil
	}
	n := int64(utf8.RuneCountInString(v))
	if vv.MinLength != nil && n < *vv.MinLength {
		return fmt.Errorf("shorter than minLength %d", *vv.MinLength)
	}
	if vv.MaxLength != nil && n > *vv.MaxLength {
		return fmt.Errorf("longer than maxLength %d", *vv.MaxLength)
	}
	if vv.Pattern != "" {
		p, err := e.pattern(vv.Pattern)
		if err != nil {
			return err
		}
		if !p.re.MatchString(v) {
			return fmt.Errorf("does not match pattern %q", vv.Pattern)
		}
	}
	if f := e.format(s); f != "" && strfmt.Default.ContainsName(f) && !strfmt.Default.Validates(f, v) {
		return fmt.Errorf("is not a valid %s", vv.Format)
	}
	return nil
}

// needsCheck reports whether values of s must be verified after generation:
// the generator does not construct values for junctors or CEL rules.
func (e *env) needsCheck(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	vv := s.ValueValidation
	if vv == nil {
		return false
	}
	if vv.Not != nil || len(vv.OneOf) > 0 {
		return true
	}
	if len(vv.AnyOf) > 0 && !(s.XIntOrString && len(vv.AnyOf) == 2 && len(vv.AllOf) == 0) {
		return true
	}
	if len(vv.AllOf) > 0 {
		return true
	}
	return false
}

func (e *env) checkNode(s *structuralschema.Structural, l loc, v any) field.ErrorList {
	c, ok := e.nodes[l.key]
	if !ok {
		var err error
		c, err = newChecker(s, false)
		if err != nil {
			return field.ErrorList{field.InternalError(l.fp, err)}
		}
		e.nodes[l.key] = c
	}
	return c.validateValue(v)
}

func (e *env) checkRoot(obj map[string]any) field.ErrorList {
	if e.rootChk == nil {
		c, err := newChecker(e.root, true)
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		e.rootChk = c
	}
	return e.rootChk.validateObject(obj)
}
