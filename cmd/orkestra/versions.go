package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/lifecycle/versions"
	"github.com/orkspace/orkestra-cel/manifests"
)

// versionsFlags are `orkestra versions`' own flags.
type versionsFlags struct {
	kubeconfig string
	output     string
	metricsURL []string
	operator   versions.Operator
	idle       time.Duration
}

func newVersionsCmd() *cobra.Command {
	var kf katalogFlags
	vf := versionsFlags{
		output:   "text",
		operator: versions.Operator{Namespace: manifests.DefaultNamespace, Name: manifests.DefaultName, Port: manifests.HTTPPort},
		idle:     versions.DefaultIdle,
	}
	cmd := &cobra.Command{
		Use:   "versions -f KATALOG",
		Short: "Per CRD version: served, storage, stored, deprecated, objects, conversions, and whether it can go",
		Long: `versions reads the katalog's CRDs from the cluster and prints, per CRD and
version: served, storage, listed in status.storedVersions, deprecated (and
the warning), objects stored at it where that is knowable, and how many
objects Orkestra's webhook converted to and from it since the operator
started — then a verdict:

  safe to stop serving   a served version no object is stored at, deprecated,
                         not watched by the katalog, and no conversion to it
                         (no client reading or writing it) for --idle
  safe to remove         a version no longer served and no longer stored
  not yet                followed by every reason

The conversion counters come from the operator's /metrics: --metrics-url,
else the pods of an in-cluster install (--operator-namespace,
--operator-name) through the API server. When they cannot be read the
verdict says so.`,
		Example: `  orkestra versions -f katalog.yaml
  orkestra versions -f katalog.yaml -o json --metrics-url http://127.0.0.1:8080/metrics`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if vf.output != "text" && vf.output != "json" {
				return fmt.Errorf("-o %s: the output is text or json", vf.output)
			}
			kf.cluster = (&runFlags{kubeconfig: vf.kubeconfig}).restConfig
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			cfg, err := (&runFlags{kubeconfig: vf.kubeconfig}).restConfig()
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			var counters versions.Counters
			if len(vf.metricsURL) > 0 {
				counters = versions.ScrapeURLs(ctx, vf.metricsURL)
			} else {
				counters = versions.ScrapeOperator(ctx, cfg, vf.operator)
			}
			report, err := versions.Build(ctx, cfg, plan, versions.Options{Conversions: counters, Idle: vf.idle})
			if err != nil {
				return err
			}
			if vf.output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			printVersions(cmd.OutOrStdout(), report, time.Now())
			return nil
		},
	}
	kf.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&vf.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster config, ~/.kube/config)")
	fs.StringVarP(&vf.output, "output", "o", vf.output, "text or json")
	fs.StringArrayVar(&vf.metricsURL, "metrics-url", nil, "the operator's /metrics URL to read conversion counters from (repeatable: one per replica); default: the operator's pods through the API server")
	fs.StringVar(&vf.operator.Namespace, "operator-namespace", vf.operator.Namespace, "namespace of the operator's pods")
	fs.StringVar(&vf.operator.Name, "operator-name", vf.operator.Name, "the install's name (label app.kubernetes.io/instance of the operator's pods)")
	fs.DurationVar(&vf.idle, "idle", vf.idle, "how long no conversion to a version may have been seen before it is safe to stop serving")
	return cmd
}

func printVersions(w io.Writer, r *versions.Report, now time.Time) {
	for i, cr := range r.CRDs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, cr.Summary())
		if cr.Error != "" {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  VERSION\tSERVED\tSTORAGE\tSTORED\tDEPRECATED\tOBJECTS\tCONVERSIONS TO\tFROM\tVERDICT")
		for _, v := range cr.Versions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, yesNo(v.Served), yesNo(v.Storage), yesNo(v.InStoredVersions), yesNo(v.Deprecated),
				orUnknown(v.Objects), orUnknownF(v.ConversionsTo), orUnknownF(v.ConversionsFrom), v.Verdict)
		}
		_ = tw.Flush()
		for _, v := range cr.Versions {
			if v.DeprecationWarning != nil {
				fmt.Fprintf(w, "  %s warns: %q\n", v.Name, *v.DeprecationWarning)
			}
			if len(v.Because) > 0 {
				fmt.Fprintf(w, "  %s: not yet, because %s\n", v.Name, strings.Join(v.Because, "; and "))
			}
		}
	}
	src := r.Conversions
	switch {
	case !src.Known:
		fmt.Fprintf(w, "\nconversion counters: unknown (%s)\n", src.Error)
	case src.Since != nil:
		fmt.Fprintf(w, "\nconversion counters: %s, counting for %s\n", strings.Join(src.From, ", "), now.Sub(*src.Since).Round(time.Second))
	default:
		fmt.Fprintf(w, "\nconversion counters: %s\n", strings.Join(src.From, ", "))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orUnknown(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprint(*n)
}

func orUnknownF(n *float64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f", *n)
}
