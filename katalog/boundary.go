package katalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Where a katalog's files may be: crdFile, crFiles, imports, motifs and
// include: fragments may name any file inside the katalog's repository — the
// nearest directory above the katalog holding .git (a directory, or the file
// a git worktree has) — and, without one, inside the katalog's own
// directory. Upstream's examples share a CRD between sibling folders
// (crdFile: ../crd.yaml), which a boundary at the katalog's directory
// refused. Symbolic links are resolved before the check, so a link inside
// the repository that points out of it is outside.

// Boundary is one directory a katalog's files must resolve under.
type Boundary struct {
	// Dir is the directory, symbolic links resolved.
	Dir string
	// Repository is true when Dir holds .git (the katalog's repository);
	// false when the katalog is in none and Dir is its own directory.
	Repository bool
}

// String names the boundary in messages.
func (b Boundary) String() string {
	if b.Repository {
		return "repository " + b.Dir
	}
	return "directory " + b.Dir + " (it is in no git repository)"
}

// Boundaries returns the boundary of each katalog path given with -f (a
// file's directory, or the path itself when it is a directory), without
// duplicates.
func Boundaries(paths []string) []Boundary {
	var out []Boundary
	for _, p := range paths {
		dir := p
		if info, err := os.Stat(p); err != nil || !info.IsDir() {
			dir = filepath.Dir(p)
		}
		real, err := realPath(dir)
		if err != nil {
			continue
		}
		b := Boundary{Dir: real}
		if repo, ok := repositoryOf(real); ok {
			b = Boundary{Dir: repo, Repository: true}
		}
		dup := false
		for _, o := range out {
			dup = dup || o == b
		}
		if !dup {
			out = append(out, b)
		}
	}
	return out
}

// repositoryOf returns the nearest directory at or above dir that holds .git.
func repositoryOf(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// ErrOutside: a file a katalog names resolves outside its boundary.
var ErrOutside = errors.New("outside the katalog's")

// Confine checks that path, symbolic links resolved, lies under one of the
// boundaries. A path that does not exist passes: reading it reports that.
func Confine(path string, bounds []Boundary) error {
	if len(bounds) == 0 {
		return nil
	}
	real, err := realPath(path)
	if err != nil {
		return nil
	}
	for _, b := range bounds {
		if within(real, b.Dir) {
			return nil
		}
	}
	shown := path
	if real != path {
		shown = fmt.Sprintf("%s (%s)", path, real)
	}
	names := make([]string, len(bounds))
	for i, b := range bounds {
		names[i] = b.String()
	}
	return fmt.Errorf("%s is %w %s", shown, ErrOutside, strings.Join(names, ", "))
}

// confine checks a file the katalog names against its boundaries, unless
// Options.AllowOutsidePaths.
func (l *loader) confine(path string) error {
	if l.opts.AllowOutsidePaths {
		return nil
	}
	if err := Confine(path, l.bounds); err != nil {
		return fmt.Errorf("%w; move it under that directory, or pass --allow-outside-paths to read files anywhere", err)
	}
	return nil
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path is root or under it.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
