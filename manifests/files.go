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
// `-f` arguments of the container, one per given path, under mountPath;
// outside reports a file outside the given paths' directories (a sibling
// folder of the repository), which the container, whose mount holds no
// .git, must be allowed to read.
func katalogFiles(k *katalog.Katalog, given []string, mountPath string) (files []katalogFile, args []string, outside bool, err error) {
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
	for _, f := range append(append([]string{}, k.Files...), k.Included...) {
		if err := add(f); err != nil {
			return nil, nil, false, err
		}
	}
	for _, e := range k.CRDs {
		if e.CRD != nil {
			if err := add(e.CRD.Path); err != nil {
				return nil, nil, false, err
			}
		}
		for _, f := range e.CRFiles {
			if err := add(f); err != nil {
				return nil, nil, false, err
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
			return nil, nil, false, err
		}
		givenAbs = append(givenAbs, a)
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			dirs[a] = true
		}
	}
	if err := confined(abs, givenAbs); err != nil {
		return nil, nil, false, err
	}
	root := commonDir(abs, givenAbs, dirs)
	var own []katalog.Boundary
	for _, g := range givenAbs {
		d := g
		if !dirs[g] {
			d = filepath.Dir(g)
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			own = append(own, katalog.Boundary{Dir: r})
		}
	}
	for _, a := range abs {
		outside = outside || katalog.Confine(a, own) != nil
	}
	total := 0
	keys := map[string]string{}
	for _, a := range abs {
		rel, err := filepath.Rel(root, a)
		if err != nil {
			return nil, nil, false, err
		}
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(a)
		if err != nil {
			return nil, nil, false, err
		}
		if !utf8.Valid(data) {
			return nil, nil, false, fmt.Errorf("%s is not UTF-8 text; the katalog's files are shipped in a ConfigMap", a)
		}
		key := badKeyChars.ReplaceAllString(strings.ReplaceAll(rel, "/", "__"), "_")
		if other, dup := keys[key]; dup {
			return nil, nil, false, fmt.Errorf("%s and %s map to the same ConfigMap key %q; rename one", other, rel, key)
		}
		keys[key] = rel
		total += len(data)
		files = append(files, katalogFile{abs: a, rel: rel, key: key, data: string(data)})
	}
	if total > maxConfigMapBytes {
		return nil, nil, false, fmt.Errorf("the katalog's files (katalog, CRD manifests, crFiles) hold %d bytes, more than a ConfigMap can (1 MiB); build an image that contains them and drop the katalog volume", total)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	for _, g := range givenAbs {
		rel, err := filepath.Rel(root, g)
		if err != nil {
			return nil, nil, false, err
		}
		args = append(args, path.Join(mountPath, filepath.ToSlash(rel)))
	}
	return files, args, outside, nil
}

// confined refuses a file outside the katalog's boundary (its repository,
// else its directory; katalog.Boundaries), symbolic links resolved: the
// ConfigMap would carry it into the cluster (kustomize refuses such files
// too), whatever --allow-outside-paths let the loader read.
func confined(files, given []string) error {
	bounds := katalog.Boundaries(given)
	for _, f := range files {
		if err := katalog.Confine(f, bounds); err != nil {
			return fmt.Errorf("%w; orkestra manifests ships only files under it (in the katalog ConfigMap): copy the file there and name it relative to the katalog", err)
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
