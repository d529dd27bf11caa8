// Package objfile reads Kubernetes objects from YAML or JSON files, the way
// every command that takes object files reads them.
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

// Read reads Kubernetes objects from files (stdin when none): YAML or
// JSON, several documents per file, and `kind: List` items unpacked.
func Read(files []string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	read := func(name string, r io.Reader) error {
		yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
		for doc := 1; ; doc++ {
			raw, err := yr.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			// Decode as the API server does: JSON numbers become int64 or float64.
			j, err := yaml.YAMLToJSON(raw)
			if err != nil {
				return fmt.Errorf("%s (document %d): %v", name, doc, err)
			}
			if string(bytes.TrimSpace(j)) == "null" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				return fmt.Errorf("%s (document %d): %v", name, doc, err)
			}
			if u.IsList() {
				err := u.EachListItem(func(o runtime.Object) error {
					out = append(out, o.(*unstructured.Unstructured))
					return nil
				})
				if err != nil {
					return fmt.Errorf("%s (document %d): %v", name, doc, err)
				}
				continue
			}
			if u.GetAPIVersion() == "" || u.GetKind() == "" {
				return fmt.Errorf("%s (document %d): an object needs apiVersion and kind", name, doc)
			}
			out = append(out, u)
		}
	}
	if len(files) == 0 {
		return out, read("<stdin>", stdin)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		err = read(f, fh)
		fh.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
