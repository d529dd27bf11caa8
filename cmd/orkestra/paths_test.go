package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Issue 15 item 5: `check` said ok for crFiles: [/etc/passwd]. A crFiles
// path outside the katalog's directory is an error; with
// --allow-outside-paths the file is read, and a file that is no Kubernetes
// object is still an error.
func TestCheckConfinesPathsUnlessAllowed(t *testing.T) {
	dir, write := websiteDir(t)
	secret := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(secret, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := write("k.yaml", `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      crFiles: [`+secret+`]
`)
	realDir, _ := filepath.EvalSymlinks(dir)
	_, stderr, code := run(t, "", "check", "-f", k)
	want := k + ":8:17: [site] crFiles[0]: sample object file " + secret + " is outside the katalog's directory " + realDir + " (it is in no git repository); move it under that directory, or pass --allow-outside-paths to read files anywhere\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	_, stderr, code = run(t, "", "check", "--allow-outside-paths", "-f", k)
	want = k + ":8:17: [site] crFiles[0]: sample object file " + secret + ": document 1 is not a Kubernetes object (it needs apiVersion and kind)\n"
	if code != 1 || stderr != want {
		t.Errorf("--allow-outside-paths: exit %d, stderr %q\nwant %q", code, stderr, want)
	}
}
