package manifests

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/orkspace/orkestra-cel/katalog"
)

// maxConfigMapBytes leaves room for the ConfigMap's metadata under the API
// server's 1 MiB object limit.
const maxConfigMapBytes = 1000 * 1024

// katalogFile is one file the katalog needs at run time.
type katalogFile struct {
	abs  string
	rel  string // slash-separated, relative to the common root
	key  string // ConfigMap key
	data string
}

var badKeyChars = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// katalogFiles collects the katalog documents, the CRD manifests their
// entries name and the crFiles samples (the loader checks they exist), with
// their paths relative to the directory that holds them all. args are the
// `-f` arguments of the container, one per given path, under mountPath.
func katalogFiles(k *katalog.Katalog, given []string, mountPath string) (files []katalogFile, args []string, err error) {
	seen := map[string]bool{}
	var abs []string
	add := func(p string) error {
		a, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if !seen[a] {
			seen[a] = true
			abs = append(abs, a)
		}
		return nil
	}
	for _, f := range k.Files {
		if err := add(f); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range k.CRDs {
		if e.CRD != nil {
			if err := add(e.CRD.Path); err != nil {
				return nil, nil, err
			}
		}
		for _, f := range e.CRFiles {
			if err := add(f); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(given) == 0 {
		given = k.Files
	}
	var givenAbs []string
	dirs := map[string]bool{}
	for _, g := range given {
		a, err := filepath.Abs(g)
		if err != nil {
			return nil, nil, err
		}
		givenAbs = append(givenAbs, a)
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			dirs[a] = true
		}
	}
	if err := confined(abs, givenAbs, dirs); err != nil {
		return nil, nil, err
	}
	root := commonDir(abs, givenAbs, dirs)
	total := 0
	keys := map[string]string{}
	for _, a := range abs {
		rel, err := filepath.Rel(root, a)
		if err != nil {
			return nil, nil, err
		}
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(a)
		if err != nil {
			return nil, nil, err
		}
		if !utf8.Valid(data) {
			return nil, nil, fmt.Errorf("%s is not UTF-8 text; the katalog's files are shipped in a ConfigMap", a)
		}
		key := badKeyChars.ReplaceAllString(strings.ReplaceAll(rel, "/", "__"), "_")
		if other, dup := keys[key]; dup {
			return nil, nil, fmt.Errorf("%s and %s map to the same ConfigMap key %q; rename one", other, rel, key)
		}
		keys[key] = rel
		total += len(data)
		files = append(files, katalogFile{abs: a, rel: rel, key: key, data: string(data)})
	}
	if total > maxConfigMapBytes {
		return nil, nil, fmt.Errorf("the katalog's files (katalog, CRD manifests, crFiles) hold %d bytes, more than a ConfigMap can (1 MiB); build an image that contains them and drop the katalog volume", total)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	for _, g := range givenAbs {
		rel, err := filepath.Rel(root, g)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, path.Join(mountPath, filepath.ToSlash(rel)))
	}
	return files, args, nil
}

// confined refuses a file outside the directories of the given katalog
// paths, symbolic links resolved: the ConfigMap would carry it into the
// cluster (kustomize refuses such files too), whatever --allow-outside-paths
// let the loader read.
func confined(files, given []string, dirs map[string]bool) error {
	var roots []string
	for _, g := range given {
		if !dirs[g] {
			g = filepath.Dir(g)
		}
		r, err := filepath.EvalSymlinks(g)
		if err != nil {
			return err
		}
		roots = append(roots, r)
	}
	for _, f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			return err
		}
		inside := false
		for _, r := range roots {
			rel, err := filepath.Rel(r, real)
			inside = inside || err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		}
		if !inside {
			return fmt.Errorf("%s is outside the katalog's directory %s; orkestra manifests ships only files under it (in the katalog ConfigMap): copy the file there and name it relative to the katalog", f, strings.Join(roots, ", "))
		}
	}
	return nil
}

// commonDir is the deepest directory holding every file and given path.
func commonDir(files, given []string, dirs map[string]bool) string {
	var parts [][]string
	for _, f := range files {
		parts = append(parts, strings.Split(filepath.Dir(f), string(filepath.Separator)))
	}
	for _, g := range given {
		d := g
		if !dirs[g] {
			d = filepath.Dir(g)
		}
		parts = append(parts, strings.Split(d, string(filepath.Separator)))
	}
	common := parts[0]
	for _, p := range parts[1:] {
		n := 0
		for n < len(common) && n < len(p) && common[n] == p[n] {
			n++
		}
		common = common[:n]
	}
	dir := strings.Join(common, string(filepath.Separator))
	if dir == "" {
		return string(filepath.Separator)
	}
	return dir
}

// volumeItems projects each ConfigMap key at its relative path.
func volumeItems(files []katalogFile) []corev1.KeyToPath {
	items := make([]corev1.KeyToPath, 0, len(files))
	for _, f := range files {
		items = append(items, corev1.KeyToPath{Key: f.key, Path: f.rel})
	}
	return items
}
