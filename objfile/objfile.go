// Package objfile reads Kubernetes objects from YAML or JSON files, the way
// every command and package that takes object files reads them (the CLI's
// object arguments, conformance and migrate's sample objects, simulate's
// spec files): several documents per file, `kind: List` items unpacked,
// numbers decoded as the API server decodes them (int64, float64).
package objfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Read reads Kubernetes objects from files (stdin when none).
func Read(files []string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	if len(files) == 0 {
		return Decode("<stdin>", stdin)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ReadFile reads the Kubernetes objects of one file.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return Decode(path, fh)
}

// Decode reads the Kubernetes objects of a YAML or JSON stream; name says
// where it comes from in errors. Empty and null documents are skipped; an
// object without apiVersion or kind is an error.
func Decode(name string, r io.Reader) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for doc := 1; ; doc++ {
		raw, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		// Decode as the API server does: JSON numbers become int64 or float64.
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", name, doc, err)
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", name, doc, err)
		}
		if u.IsList() {
			err := u.EachListItem(func(o runtime.Object) error {
				out = append(out, o.(*unstructured.Unstructured))
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s (document %d): %w", name, doc, err)
			}
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("%s (document %d): an object needs apiVersion and kind", name, doc)
		}
		out = append(out, u)
	}
}
