package main

import (
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/objfile"
)

// readObjects reads Kubernetes objects from files (stdin when none): see
// objfile.Read.
func readObjects(files []string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	return objfile.Read(files, stdin)
}

// writeObjects prints objects as a multi-document YAML stream.
func writeObjects(w io.Writer, objs []map[string]any) error {
	for i, o := range objs {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
