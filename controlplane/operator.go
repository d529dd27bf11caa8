package controlplane

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/webhook"
)

// RunFunc runs the operator of plan against cfg until ctx is done, serving
// as serving says (the CLI's `orkestra run` without leader election).
type RunFunc func(ctx context.Context, cfg *rest.Config, plan *engine.Plan, serving webhook.Config) error

// Operator is the operator running in this process.
type Operator struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// StartOperator starts run in a goroutine and waits until the webhook
// serves, so that the API server can convert from the first object applied.
func StartOperator(ctx context.Context, cfg *rest.Config, plan *engine.Plan, wh *Webhook, httpAddr string, run RunFunc) (*Operator, error) {
	opCtx, cancel := context.WithCancel(ctx)
	o := &Operator{cancel: cancel, done: make(chan struct{})}
	ended := make(chan error, 1)
	go func() {
		err := run(opCtx, cfg, plan, wh.Serving(httpAddr))
		ended <- err
		o.err = err
		close(o.done)
	}()
	if err := wh.wait(ctx, ended); err != nil {
		cancel()
		<-o.done
		return nil, err
	}
	return o, nil
}

// Done is closed when the operator has stopped (on its own or by Stop).
func (o *Operator) Done() <-chan struct{} { return o.done }

// Err is the error the operator stopped with; call it after Done is closed.
func (o *Operator) Err() error {
	if o.err != nil && !errors.Is(o.err, context.Canceled) {
		return fmt.Errorf("the operator stopped: %w", o.err)
	}
	return nil
}

// Stop stops the operator, waits for it and returns Err.
func (o *Operator) Stop() error {
	o.cancel()
	<-o.done
	return o.Err()
}
