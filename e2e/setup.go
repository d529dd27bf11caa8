package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objfile"
	"github.com/orkspace/orkestra-cel/readiness"
)

// installCRDs applies the spec's CRD files, then the katalog's own CRDs
// (converting through the runtime's webhook): a CRD the katalog installs
// is not applied from the files as well.
func (x *run) installCRDs(ctx context.Context) error {
	ours := map[string]bool{}
	if x.plan != nil && x.cluster.InstallCRDs != nil {
		for _, e := range x.plan.Entries {
			if e.Source.CRD != nil && e.Source.CRD.Object != nil {
				ours[e.Source.CRD.Object.Name] = true
			}
		}
	}
	ext, err := apiextensionsclient.NewForConfig(x.k.cfg)
	if err != nil {
		return err
	}
	for _, f := range x.spec.CRDs {
		objs, err := readManifest(f)
		if err != nil {
			return err
		}
		var rest []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" || !ours[o.GetName()] {
				rest = append(rest, o)
			}
		}
		if len(rest) == 0 {
			continue
		}
		fmt.Fprintf(x.r.Out, "→ applying CRDs from %s\n", f)
		if out, code := x.k.applyObjects(ctx, rest, ""); code != 0 {
			return fmt.Errorf("%s: %s", f, out)
		}
		for _, o := range rest {
			x.applied = append(x.applied, targetOf(o))
			if o.GetKind() == "CustomResourceDefinition" {
				if err := controlplane.WaitEstablished(ctx, ext, o.GetName()); err != nil {
					return err
				}
			}
		}
	}
	if len(ours) > 0 {
		fmt.Fprintf(x.r.Out, "→ installing the CRDs of %s\n", x.plan.Katalog.Name)
		return x.cluster.InstallCRDs(ctx, x.plan)
	}
	return nil
}

// setup applies spec.setup: files (each with its waits), Helm charts, then
// the waits.
func (x *run) setup(ctx context.Context) error {
	st := x.spec.Setup
	for _, a := range st.Apply {
		fmt.Fprintf(x.r.Out, "→ applying setup %s\n", a.Path)
		objs, err := readManifest(a.Path)
		if err != nil {
			return err
		}
		if out, code := x.k.applyObjects(ctx, objs, ""); code != 0 {
			return fmt.Errorf("%s: %s", a.Path, out)
		}
		for _, o := range objs {
			x.applied = append(x.applied, targetOf(o))
		}
		if err := x.waits(ctx, a.Wait); err != nil {
			return err
		}
	}
	for _, h := range st.Helm {
		if err := x.helm(ctx, h); err != nil {
			return err
		}
		if err := x.waits(ctx, h.Wait); err != nil {
			return err
		}
	}
	return x.waits(ctx, st.Wait)
}

// helm runs `helm upgrade --install` with KUBECONFIG set to the cluster.
func (x *run) helm(ctx context.Context, h *HelmInstall) error {
	args := []string{"upgrade", "--install", h.Release, h.Chart, "--namespace", h.Namespace, "--wait=false"}
	if h.Repo != "" {
		args = append(args, "--repo", h.Repo)
	}
	if h.Version != "" {
		args = append(args, "--version", h.Version)
	}
	if h.CreateNamespace {
		args = append(args, "--create-namespace")
	}
	for _, f := range h.ValueFiles {
		args = append(args, "--values", f)
	}
	if len(h.Values) > 0 {
		vals, err := sigsyaml.Marshal(h.Values)
		if err != nil {
			return err
		}
		f, err := os.CreateTemp("", "orkestra-e2e-values-*.yaml")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(vals); err != nil {
			return err
		}
		f.Close()
		args = append(args, "--values", f.Name())
	}
	fmt.Fprintf(x.r.Out, "→ helm %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "helm", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+x.k.kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm upgrade --install %s: %w\n%s", h.Release, err, out)
	}
	return nil
}

// waits blocks until each resource exists (and is ready), within its
// timeout.
func (x *run) waits(ctx context.Context, ws []*Wait) error {
	for _, w := range ws {
		fmt.Fprintf(x.r.Out, "→ waiting for %s/%s\n", w.Kind, w.Name)
		var last string
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, w.Timeout, true, func(ctx context.Context) (bool, error) {
			o, _, err := x.k.get(ctx, w.Kind, w.Name, w.Namespace)
			switch {
			case apierrors.IsNotFound(err) || err != nil && strings.Contains(err.Error(), "serves no kind"):
				last = "not found"
				return false, nil
			case err != nil:
				return false, err
			case !w.Ready:
				return true, nil
			}
			ok, why := readiness.Of(o)
			last = why
			return ok, nil
		})
		if err != nil {
			return fmt.Errorf("%s:%d:%d: waiting for %s/%s: %s after %s", w.Pos.File, w.Pos.Line, w.Pos.Col, w.Kind, w.Name, last, w.Timeout)
		}
	}
	return nil
}

// teardown removes, on a cluster the run does not own, what it applied:
// the custom resources, the setup objects and the CRD files' objects in
// reverse order, Helm releases; the katalog's CRDs last.
func (x *run) teardown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	fmt.Fprintln(x.r.Out, "→ removing what the run applied")
	if !x.crsDone {
		for _, t := range x.targetsOf(x.spec.CRs) {
			_ = x.k.deleteOne(ctx, t, true)
		}
	}
	for i := len(x.applied) - 1; i >= 0; i-- {
		if err := x.k.deleteOne(ctx, x.applied[i], true); err != nil {
			fmt.Fprintf(x.r.Out, "  ! %v\n", err)
		}
	}
	for i := len(x.spec.Setup.Helm) - 1; i >= 0; i-- {
		h := x.spec.Setup.Helm[i]
		cmd := exec.CommandContext(ctx, "helm", "uninstall", h.Release, "--namespace", h.Namespace, "--ignore-not-found")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+x.k.kubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(x.r.Out, "  ! helm uninstall %s: %v\n%s\n", h.Release, err, out)
		}
	}
	if x.plan != nil && x.cluster.InstallCRDs != nil {
		for _, e := range x.plan.Entries {
			if c := e.Source.CRD; c != nil && c.Object != nil && c.Origin != katalog.BuiltIn {
				_ = x.k.deleteOne(ctx, Target{Kind: "CustomResourceDefinition", Name: c.Object.Name}, true)
			}
		}
	}
}

// targetsOf names the objects of manifest files.
func (x *run) targetsOf(files []string) []Target {
	var out []Target
	for _, f := range files {
		objs, err := readManifest(f)
		if err != nil {
			continue
		}
		for _, o := range objs {
			out = append(out, targetOf(o))
		}
	}
	return out
}

func targetOf(o *unstructured.Unstructured) Target {
	return Target{Kind: o.GetAPIVersion() + "/" + o.GetKind(), Name: o.GetName(), Namespace: o.GetNamespace()}
}

func readManifest(file string) ([]*unstructured.Unstructured, error) {
	return objfile.Read([]string{file}, nil)
}
