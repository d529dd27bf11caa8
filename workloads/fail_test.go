package workloads

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFails(t *testing.T) {
	sh := func(script string) []string { return []string{"sh", "-c", script} }
	cases := []struct {
		name     string
		ann      map[string]string // on the object
		tmplAnn  map[string]string // on a Job's pod template
		command  []string
		args     []string
		fails    bool
		inReason string
	}{
		{name: "plain command succeeds", command: []string{"echo", "hi"}},
		{name: "annotation true", ann: map[string]string{AnnotationFail: "true"}, fails: true, inReason: AnnotationFail},
		{name: "annotation message", ann: map[string]string{AnnotationFail: "disk full"}, fails: true, inReason: "disk full"},
		{name: "annotation on the pod template", tmplAnn: map[string]string{AnnotationFail: "true"}, fails: true},
		{name: "annotation false wins over the script", ann: map[string]string{AnnotationFail: "false"}, command: sh("exit 1")},
		{name: "script ends with exit 1 after &&", command: sh("echo 'Build failing' && exit 1"), fails: true, inReason: "exit 1"},
		{name: "script ends with exit 3 after ;", command: sh("echo a; exit 3"), fails: true, inReason: "exit 3"},
		{name: "script with a trailing ;", command: sh("echo a && exit 2;\n"), fails: true, inReason: "exit 2"},
		{name: "script in args", command: []string{"/bin/bash"}, args: []string{"-c", "false\nexit 1"}, fails: true},
		{name: "exit only when something failed", command: sh("test -f /x || exit 1")},
		{name: "exit 0", command: sh("echo ok; exit 0")},
		{name: "exit inside a conditional", command: sh("if false; then exit 1; fi")},
		{name: "exit inside a quoted string", command: sh(`echo "then exit 1"`)},
		{name: "false", command: []string{"/bin/false"}, fails: true, inReason: "runs false"},
		{name: "not a shell", command: []string{"python", "-c", "exit 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Annotations: tc.ann}
			spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Command: tc.command, Args: tc.args}}}
			fails, reason := Fails(obj, spec, &metav1.ObjectMeta{Annotations: tc.tmplAnn})
			if fails != tc.fails {
				t.Fatalf("Fails = %v (%q), want %v", fails, reason, tc.fails)
			}
			if !strings.Contains(reason, tc.inReason) {
				t.Errorf("reason %q does not say %q", reason, tc.inReason)
			}
		})
	}
}
