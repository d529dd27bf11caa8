package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/webhook"
)

func newServeCmd() *cobra.Command {
	var kf katalogFlags
	serving := webhook.DefaultConfig()
	verbosity := 0
	cmd := &cobra.Command{
		Use:   "serve -f KATALOG",
		Short: "Serve the /convert webhook, metrics and health; needs no cluster when every entry has its CRD",
		Long: `serve loads and compiles the katalog, then serves until SIGINT or SIGTERM:

  HTTPS --webhook-addr (default :8443)
    POST /convert        ConversionReview apiextensions.k8s.io/v1 and v1beta1
  HTTP  --http-addr (default :8080)
    GET /metrics         Prometheus: orkestra_conversion_* and Go/process metrics
    GET /healthz         200 while the process runs
    GET /readyz          200 once the HTTPS listener serves, 503 when stopping
    GET /katalog         every entry: workers, conversion statistics, …
    GET /katalog/{crd}   one entry

The certificate and key (--tls-cert/--tls-key, or TLS_CERT/TLS_KEY) are
reloaded when the files change, without a restart. With --client-ca the
webhook requires client certificates signed by that CA. On SIGTERM /readyz
turns 503 and in-flight reviews get --shutdown-timeout to finish.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			serving.Complete(os.Getenv)
			if err := serving.Validate(); err != nil {
				return err
			}
			if kf.kubeconfig == "" {
				// Entries without crdFile take their CRD from the cluster.
				kf.cluster = (&runFlags{}).restConfig
			}
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity), textlogger.Output(cmd.ErrOrStderr())))
			ctrl.SetLogger(log)
			srv := &webhook.Server{
				Config:    serving,
				Plan:      plan,
				Converter: conversion.New(plan, conversion.Options{}),
				Registry:  ctrlmetrics.Registry,
				Log:       log.WithName("webhook"),
			}
			return srv.Run(ctrl.SetupSignalHandler())
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	serving.AddFlags(cmd.Flags())
	cmd.Flags().IntVarP(&verbosity, "verbosity", "v", 0, "log verbosity (0: info, 1 and more: debug)")
	return cmd
}
