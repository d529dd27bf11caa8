package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/manifests"
)

// defaultImage is the image `orkestra manifests` installs: this release's
// tag, or latest for a development build.
func defaultImage() string {
	if strings.HasPrefix(version, "v") && !strings.Contains(version, "dirty") {
		return strings.TrimSuffix(manifests.DefaultImage, ":latest") + ":" + version
	}
	return manifests.DefaultImage
}

func newManifestsCmd() *cobra.Command {
	var kf katalogFlags
	opts := manifests.Options{
		Namespace: manifests.DefaultNamespace,
		Name:      manifests.DefaultName,
		Image:     defaultImage(),
		Replicas:  manifests.DefaultReplicas,
	}
	var outDir string
	cmd := &cobra.Command{
		Use:   "manifests -f KATALOG",
		Short: "Print the in-cluster install of a katalog: CRDs with webhook conversion, RBAC, Deployment, Service",
		Long: `manifests prints everything an in-cluster install needs, as multi-document
YAML for kubectl apply (or, with --output-dir, as a kustomize base):

  Namespace (restricted Pod Security), ServiceAccount, a ClusterRole with
  least privilege derived from the katalog (only the verbs and resources its
  hooks use, its custom resources with /status and /finalizers, events), a
  Role for the leader election Lease (and the built-in certificate Secret, by
  name), a ConfigMap with the katalog's files, the Deployment running
  ` + "`orkestra run`" + ` (leader election, probes, resource requests, restricted
  securityContext, read-only root filesystem), the webhook and metrics
  Service, a PodDisruptionBudget, and the katalog's CRDs converting through
  that Service's /convert, and a NetworkPolicy admitting only the webhook
  and metrics ports.

Certificates: by default Orkestra's built-in mode — at start the operator
creates a CA and serving certificate in a Secret shared by its replicas,
writes the CA bundle into its CRDs (and keeps it there), and rotates before
expiry; the output holds no caBundle. With --cert-manager: a self-signed
Issuer, a Certificate, and the cert-manager.io/inject-ca-from annotation on
the CRDs instead.

What cannot be derived (a custom child whose apiVersion or kind is an
expression) is reported on stderr.`,
		Example: `  orkestra manifests -f katalog.yaml | kubectl apply --server-side -f -
  orkestra manifests -f katalog.yaml --cert-manager --image registry.example.com/orkestra:v1
  orkestra manifests -f katalog.yaml -o deploy/base     # a kustomize base`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			opts.KatalogPaths = kf.files

			if opts.Replicas < 1 {
				return fmt.Errorf("--replicas must be at least 1, got %d", opts.Replicas)
			}
			in, err := manifests.Generate(plan, opts)
			if err != nil {
				return err
			}
			for _, w := range in.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			for _, n := range in.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			if outDir == "" {
				return in.WriteYAML(cmd.OutOrStdout())
			}
			written, err := in.WriteDir(outDir)
			if err != nil {
				return err
			}
			for _, f := range written {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&opts.Namespace, "namespace", "n", opts.Namespace, "namespace the operator runs in")
	fs.StringVar(&opts.Name, "name", opts.Name, "name of the namespaced objects (cluster-scoped ones are named NAMESPACE:NAME)")
	fs.StringVar(&opts.Image, "image", opts.Image, "container image running orkestra")
	fs.Int32Var(&opts.Replicas, "replicas", opts.Replicas, "replicas of the Deployment (one leads and reconciles; all serve /convert)")
	fs.BoolVar(&opts.Monitoring, "monitoring", false, "add a ServiceMonitor, a PrometheusRule (conversion failures and p99 over 50 ms, reconcile errors, a growing queue, no leader) and a Grafana dashboard ConfigMap (label grafana_dashboard: \"1\")")
	fs.BoolVar(&opts.CertManager, "cert-manager", false, "take the webhook certificate from cert-manager (Issuer, Certificate, CA injection) instead of the built-in mode")
	fs.StringVar(&opts.WatchNamespace, "watch-namespace", "", "a namespace-scoped install: the operator watches this namespace only, with a Role there instead of a ClusterRole")
	fs.StringVarP(&outDir, "output-dir", "o", "", "write a kustomize base (one file per kind of object and kustomization.yaml) into this directory instead of printing")
	return cmd
}
