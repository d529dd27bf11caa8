package workloads

import (
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationFail marks a Job or a Pod (on itself or, for a Job, on its pod
// template) whose simulated run fails: any value but "false" fails it, and a
// value other than "true" is the failure's message. "false" makes it
// succeed whatever its script says.
const AnnotationFail = "orkestra.orkspace.io/simulate-fail"

// Fails reports whether the simulated run of a Job or Pod fails, and why:
// AnnotationFail on obj (or, for a Job, the pod template's metadata given
// in tmpl), else a container whose shell script plainly ends by failing —
// `sh -c '…; exit 1'` (sh, bash, ash, dash or zsh; the last command run
// unconditionally, after `;`, `&&` or a new line, is `exit N` with N ≠ 0),
// or a command that is just `false`.
func Fails(obj metav1.Object, spec *corev1.PodSpec, tmpl ...metav1.Object) (bool, string) {
	for _, o := range append([]metav1.Object{obj}, tmpl...) {
		v, ok := o.GetAnnotations()[AnnotationFail]
		if !ok {
			continue
		}
		switch v {
		case "false":
			return false, ""
		case "true", "":
			return true, "marked to fail by the annotation " + AnnotationFail
		}
		return true, v
	}
	for _, c := range spec.Containers {
		if msg, ok := scriptFails(append(append([]string(nil), c.Command...), c.Args...)); ok {
			return true, "container " + c.Name + ": " + msg
		}
	}
	return false, ""
}

var (
	shells = map[string]bool{"sh": true, "bash": true, "ash": true, "dash": true, "zsh": true}
	// exitStatement is a last command `exit N`, N ≠ 0.
	exitStatement = regexp.MustCompile(`^exit\s+0*([1-9][0-9]{0,2})$`)
	// separators end a shell command; `||` runs what follows only when the
	// command before failed.
	separators = regexp.MustCompile(`\|\||&&|;|\n`)
)

// scriptFails reports a command line whose last command fails for certain.
func scriptFails(argv []string) (string, bool) {
	if len(argv) == 1 && path.Base(argv[0]) == "false" {
		return "runs false", true
	}
	if len(argv) < 3 || !shells[path.Base(argv[0])] || argv[1] != "-c" {
		return "", false
	}
	script := strings.TrimSpace(argv[2])
	seps := separators.FindAllStringIndex(script, -1)
	end, sep := len(script), ""
	last := ""
	for i := len(seps) - 1; i >= 0 && last == ""; i-- {
		last = strings.TrimSpace(script[seps[i][1]:end])
		if last == "" {
			end = seps[i][0] // a trailing `;` or new line
			continue
		}
		sep = script[seps[i][0]:seps[i][1]]
	}
	if last == "" {
		last = strings.TrimSpace(script[:end])
	}
	m := exitStatement.FindStringSubmatch(last)
	if m == nil || sep == "||" {
		return "", false
	}
	return "its script ends with exit " + m[1], true
}
