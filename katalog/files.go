package katalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"gopkg.in/yaml.v3"
)

// Bounds on what a load reads. Every file must be a regular file: a device
// (/dev/zero) never ends and a FIFO blocks until someone writes to it.
const (
	// MaxFileBytes bounds one CRD manifest or crFiles sample file (the API
	// server takes objects up to 3 MiB; a manifest may hold several CRDs).
	MaxFileBytes = 8 << 20
	// MaxKatalogBytes bounds the katalog documents of one load together,
	// imports included: `orkestra manifests` ships them in a ConfigMap,
	// which holds 1 MiB.
	MaxKatalogBytes = 1 << 20
)

// readFile reads the regular file at path, at most limit bytes; what names
// the file in errors ("CRD manifest", "katalog", …).
func readFile(path, what string, limit int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, what, info); err != nil {
		return nil, err
	}
	if info.Size() > limit {
		return nil, fileTooLarge(path, what, info.Size(), limit, false)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have been replaced or grown since the Stat.
	if info, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, what, info); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fileTooLarge(path, what, int64(len(data)), limit, true)
	}
	return data, nil
}

func regular(path, what string, info fs.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	var kind string
	switch m := info.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	default:
		kind = "not a regular file"
	}
	return fmt.Errorf("%s %s is %s; a %s must be a regular file", what, path, kind, what)
}

// fileTooLarge: partial means reading stopped at size bytes.
func fileTooLarge(path, what string, size, limit int64, partial bool) error {
	more := ""
	if partial {
		more = " (or more)"
	}
	return fmt.Errorf("%s %s holds %d bytes%s, over the limit of %d bytes for a %s", what, path, size, more, limit, what)
}

// missingSample reports a crFiles entry naming no file: an error for the
// commands that read every sample (Options.SamplesNeeded), else a warning —
// checking, rendering or running the katalog never reads them.
func (d *decoder) missingSample(at *yaml.Node, field, name string) {
	if why := d.loader.opts.SamplesNeeded; why != "" {
		d.errorf(at, field, "sample object file %s not found (paths are relative to the katalog's directory); %s: create it or remove it from crFiles", name, why)
		return
	}
	d.warnf(at, field, "sample object file %s not found (paths are relative to the katalog's directory); nothing here reads it, but orkestra dev (which applies it), conformance and migrate (which prove over it) refuse the katalog until it exists or leaves crFiles", name)
}

// checkSample reads a crFiles file: a regular file under MaxFileBytes whose
// every YAML document is a Kubernetes object (apiVersion and kind; a List's
// items count as its objects).
func checkSample(path string) error {
	data, err := readFile(path, "sample object file", MaxFileBytes)
	if err != nil {
		return err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	objects := 0
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("sample object file %s: %w", path, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := sigsyaml.Unmarshal(raw, &obj); err != nil || obj.APIVersion == "" || obj.Kind == "" {
			return fmt.Errorf("sample object file %s: document %d is not a Kubernetes object (it needs apiVersion and kind)", path, doc)
		}
		objects++
	}
	if objects == 0 {
		return fmt.Errorf("sample object file %s holds no object", path)
	}
	return nil
}
