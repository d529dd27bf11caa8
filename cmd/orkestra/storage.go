package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
)

func newStorageCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Storage of the katalog's CRDs in a cluster: migrate stored objects to the storage version",
	}
	cmd.AddCommand(newStorageMigrateCmd())
	return cmd
}

// migrateFlags are `orkestra storage migrate`'s own flags.
type migrateFlags struct {
	kubeconfig string
	crds       []string
	dryRun     bool
	opts       storage.Options
}

func newStorageMigrateCmd() *cobra.Command {
	var kf katalogFlags
	mf := migrateFlags{opts: storage.Options{QPS: defaultMigrationQPS, PageSize: storage.DefaultPageSize, Workers: storage.DefaultWorkers}}
	cmd := &cobra.Command{
		Use:   "migrate -f KATALOG [--crd-name NAME] [--dry-run]",
		Short: "Rewrite every stored object of the katalog's CRDs at the storage version, then prune status.storedVersions",
		Long: `migrate does once what orkestra run does on the leader: for each CRD of the
katalog (or only those named by --crd-name) whose status.storedVersions lists a
version other than the storage version, it rewrites every object unchanged,
page by page, so the API server stores it at the storage version, and then
sets storedVersions to the storage version alone — only if the CRD did not
change meanwhile. Progress is saved on the CRD after every page: an
interrupted run (or the operator) resumes there.

With --builtin-timeout the cluster's built-in migrator (a
StorageVersionMigration) is tried first and used when it progresses.

Progress is a bar on a terminal and a line a second otherwise. Exit status 0
when every CRD is migrated (or needed nothing), 1 when one failed.`,
		Example: `  orkestra storage migrate -f katalog.yaml --dry-run
  orkestra storage migrate -f katalog.yaml --crd-name websites.demo.orkestra.io --qps 200`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kf.cluster = (&runFlags{kubeconfig: mf.kubeconfig}).restConfig
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			names, err := selectCRDs(plan, mf.crds)
			if err != nil {
				return err
			}
			cfg, err := (&runFlags{kubeconfig: mf.kubeconfig}).restConfig()
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			return runStorageMigrate(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), names, mf, func(o storage.Options) (*storage.Migrator, error) {
				return storage.New(cfg, o)
			})
		},
	}
	kf.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&mf.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster config, ~/.kube/config)")
	fs.StringArrayVar(&mf.crds, "crd-name", nil, "migrate only this CRD (its metadata.name; repeatable)")
	fs.BoolVar(&mf.dryRun, "dry-run", false, "list the objects that would be rewritten; write nothing")
	fs.Float64Var(&mf.opts.QPS, "qps", mf.opts.QPS, "object writes per second (0: unbounded)")
	fs.Int64Var(&mf.opts.PageSize, "page-size", mf.opts.PageSize, "objects per list page (progress is saved after each page)")
	fs.IntVar(&mf.opts.Workers, "workers", mf.opts.Workers, "objects written in parallel")
	fs.DurationVar(&mf.opts.BuiltinTimeout, "builtin-timeout", 0, "try the cluster's built-in migrator first and use it if it shows progress within this time (0: never)")
	return cmd
}

// selectCRDs returns the katalog's CRD names, or those of only when given
// (each must be one of the katalog's).
func selectCRDs(plan *engine.Plan, only []string) ([]string, error) {
	all := plan.CRDNames()
	if len(only) == 0 {
		return all, nil
	}
	for _, n := range only {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("--crd-name %s: the katalog has no CRD of that name; it has %s", n, strings.Join(all, ", "))
		}
	}
	return only, nil
}

// runStorageMigrate migrates (or, with --dry-run, lists) each CRD in turn.
func runStorageMigrate(ctx context.Context, stdout, stderr io.Writer, names []string, mf migrateFlags, newMigrator func(storage.Options) (*storage.Migrator, error)) error {
	failed := 0
	for _, name := range names {
		bar := newProgressBar(stderr, name)
		opts := mf.opts
		opts.Progress = bar.update
		m, err := newMigrator(opts)
		if err != nil {
			return err
		}
		if mf.dryRun {
			if err := dryRun(ctx, stdout, m, name); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", name, err)
				failed++
			}
			continue
		}
		res, err := m.Migrate(ctx, name)
		bar.done()
		if err != nil {
			fmt.Fprintf(stderr, "%s: migration failed after %d objects rewritten: %v\n", name, res.Migrated, err)
			failed++
			continue
		}
		fmt.Fprintln(stdout, summary(res))
	}
	if failed > 0 {
		return exitCode(1)
	}
	return nil
}

func dryRun(ctx context.Context, w io.Writer, m *storage.Migrator, name string) error {
	p, err := m.DryRun(ctx, name, func(ns, obj string) {
		if ns != "" {
			obj = ns + "/" + obj
		}
		fmt.Fprintf(w, "would rewrite %s %s\n", name, obj)
	})
	if err != nil {
		return err
	}
	switch {
	case !p.Needed:
		fmt.Fprintf(w, "%s: nothing to migrate: storedVersions %v holds only the storage version\n", name, p.StoredVersions)
	case p.Resume:
		fmt.Fprintf(w, "%s: would resume saved progress and rewrite %d more objects at %s, then set storedVersions %v → [%s]\n", name, p.Objects, p.StorageVersion, p.StoredVersions, p.StorageVersion)
	default:
		fmt.Fprintf(w, "%s: would rewrite %d objects at %s, then set storedVersions %v → [%s]\n", name, p.Objects, p.StorageVersion, p.StoredVersions, p.StorageVersion)
	}
	return nil
}

// summary is the line printed for a finished migration.
func summary(r storage.Result) string {
	if r.Method == storage.MethodNone {
		return fmt.Sprintf("%s: nothing to migrate: storedVersions %v holds only the storage version", r.CRD, r.StoredAfter)
	}
	how := "by Orkestra"
	if r.Method == storage.MethodBuiltin {
		return fmt.Sprintf("%s: migrated to %s by the built-in StorageVersionMigration in %s; storedVersions %v → %v", r.CRD, r.StorageVersion, r.Duration.Round(time.Millisecond), r.StoredBefore, r.StoredAfter)
	}
	if r.Resumed {
		how += ", resuming saved progress"
	}
	rate := ""
	if s := r.Duration.Seconds(); s > 0 {
		rate = fmt.Sprintf(", %.0f objects/s", float64(r.Migrated+r.Skipped)/s)
	}
	return fmt.Sprintf("%s: %d objects rewritten at %s (%d changed or deleted meanwhile) %s in %s%s; storedVersions %v → %v",
		r.CRD, r.Migrated, r.StorageVersion, r.Skipped, how, r.Duration.Round(time.Millisecond), rate, r.StoredBefore, r.StoredAfter)
}

// progressBar shows a migration's progress: a bar redrawn in place on a
// terminal, else a plain line at most once a second.
type progressBar struct {
	w        io.Writer
	name     string
	terminal bool
	last     time.Time
	drawn    bool
	now      func() time.Time
}

func newProgressBar(w io.Writer, name string) *progressBar {
	return &progressBar{w: w, name: name, terminal: isTerminal(w), now: time.Now}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (b *progressBar) update(p storage.Progress) {
	now := b.now()
	final := p.Remaining == 0
	if b.terminal {
		if !final && now.Sub(b.last) < 100*time.Millisecond {
			return
		}
		b.last, b.drawn = now, true
		fmt.Fprintf(b.w, "\r%s %s", b.name, bar(p, 30))
		return
	}
	if !final && now.Sub(b.last) < time.Second {
		return
	}
	b.last = now
	fmt.Fprintf(b.w, "%s: %s\n", b.name, counts(p))
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// bar draws [=====>    ] done/total with the counts.
func bar(p storage.Progress, width int) string {
	done := p.Migrated + p.Skipped
	if p.Remaining < 0 {
		return counts(p)
	}
	total := done + p.Remaining
	filled := width
	if total > 0 {
		filled = int(int64(width) * done / total)
	}
	head := ""
	if filled < width {
		head = ">"
	}
	pad := max(0, width-filled-len(head))
	return fmt.Sprintf("[%s%s%s] %s", strings.Repeat("=", filled), head, strings.Repeat(" ", pad), counts(p))
}

func counts(p storage.Progress) string {
	if p.Method == storage.MethodBuiltin {
		return "the built-in StorageVersionMigration is running"
	}
	s := fmt.Sprintf("%d rewritten, %d changed or deleted meanwhile", p.Migrated, p.Skipped)
	if p.Remaining >= 0 {
		s += fmt.Sprintf(", %d to go", p.Remaining)
	}
	return s
}

// signalContext is the command's context, cancelled on SIGINT or SIGTERM.
func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}
