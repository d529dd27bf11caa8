package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/orkspace/orkestra-cel/manifests"
)

// pfResult is what a port-forward request saw.
type pfResult struct {
	target string
	body   string
	err    error
}

// portForward is kubectl.port-forward: an HTTP request to a port of a
// service, a pod or a Lease holder, and its assertions (unless diag). The
// runtime's own HTTP API — port 8080 in orkestra-system, where upstream's
// install and `orkestra manifests` run it — is served by the runtime in
// this process when one runs here: the request goes to it directly.
func (k *kube) portForward(ctx context.Context, p *KPortForward, diag bool) pfResult {
	base, target, stop, err := k.forward(ctx, p)
	if err != nil {
		return pfResult{target: target, err: err}
	}
	defer stop()
	if p.Wait > 0 {
		select {
		case <-time.After(p.Wait):
		case <-ctx.Done():
			return pfResult{target: target, err: ctx.Err()}
		}
	}
	if p.Path == "" {
		return pfResult{target: target}
	}
	var body io.Reader
	if p.Body != "" && p.Method != http.MethodGet && p.Method != http.MethodHead && p.Method != http.MethodDelete {
		body = strings.NewReader(os.ExpandEnv(p.Body))
	}
	req, err := http.NewRequestWithContext(ctx, p.Method, base+p.Path, body)
	if err != nil {
		return pfResult{target: target, err: err}
	}
	for h, v := range p.Headers {
		req.Header.Set(h, os.ExpandEnv(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return pfResult{target: target, err: fmt.Errorf("%s %s%s: %w", p.Method, target, p.Path, err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	r := pfResult{target: target, body: string(raw), err: err}
	if diag || r.err != nil {
		return r
	}
	if p.StatusCode != 0 {
		if resp.StatusCode != p.StatusCode {
			r.err = fmt.Errorf("%s%s: status %d, want %d\nbody: %s", target, p.Path, resp.StatusCode, p.StatusCode, strings.TrimSpace(r.body))
		}
		return r
	}
	out, err := p.Extract.apply(r.body)
	if err != nil {
		r.err = fmt.Errorf("%s%s (HTTP %d): %w", target, p.Path, resp.StatusCode, err)
		return r
	}
	if err := p.Assert.Check(out); err != nil {
		r.err = fmt.Errorf("%s%s (HTTP %d): %w\noutput: %s", target, p.Path, resp.StatusCode, err, out)
	}
	return r
}

// runtimeTarget reports a port-forward to the runtime's HTTP API.
func (k *kube) runtimeTarget(p *KPortForward) bool {
	namespace := p.Target.Namespace
	if p.Target.Lease != nil && p.Target.Lease.Namespace != "" {
		namespace = p.Target.Lease.Namespace
	}
	return k.runtimeHTTP != "" && p.Port == manifests.HTTPPort && namespace == manifests.DefaultNamespace
}

// forward returns the base URL requests go to and a stop function.
func (k *kube) forward(ctx context.Context, p *KPortForward) (string, string, func(), error) {
	if k.runtimeTarget(p) {
		return "http://" + k.runtimeHTTP, "the runtime (in process, " + k.runtimeHTTP + ")", func() {}, nil
	}
	t := p.Target
	target := "pod " + p.Pod
	port := p.Port
	switch {
	case t.Lease != nil:
		target = "the holder of Lease " + t.Lease.Lease
	case p.Service != "":
		target = "service " + p.Service
	default:
		t.Name = p.Pod
	}
	if k.noNodes {
		return "", target, nil, cannotRunf("port-forward to %s: %s", target, noContainers)
	}
	if p.Service != "" && t.Lease == nil {
		var err error
		if t, port, err = k.serviceBackend(ctx, p.Service, t.Namespace, p.Port); err != nil {
			return "", target, nil, err
		}
	}
	pod, err := k.runningPod(ctx, t)
	if err != nil {
		return "", target, nil, err
	}
	local, stop, err := k.forwardPod(pod, port)
	if err != nil {
		return "", target, nil, err
	}
	return fmt.Sprintf("http://127.0.0.1:%d", local), target, stop, nil
}

// serviceBackend picks a service's pods (its selector) and the container
// port its port targets, as `kubectl port-forward svc/NAME` does.
func (k *kube) serviceBackend(ctx context.Context, name, namespace string, port int) (Target, int, error) {
	if namespace == "" {
		namespace = "default"
	}
	svc, err := k.cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Target{}, 0, fmt.Errorf("service %s/%s: %w", namespace, name, err)
	}
	if len(svc.Spec.Selector) == 0 {
		return Target{}, 0, fmt.Errorf("service %s/%s has no selector: nothing to forward to", namespace, name)
	}
	t := Target{Namespace: namespace, LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()}
	for _, sp := range svc.Spec.Ports {
		if int(sp.Port) != port {
			continue
		}
		if sp.TargetPort.IntValue() > 0 {
			return t, sp.TargetPort.IntValue(), nil
		}
		if sp.TargetPort.StrVal != "" {
			pod, err := k.runningPod(ctx, t)
			if err != nil {
				return t, 0, err
			}
			if cp := namedPort(pod, sp.TargetPort.StrVal); cp > 0 {
				return t, cp, nil
			}
		}
		return t, port, nil
	}
	return t, 0, fmt.Errorf("service %s/%s has no port %d", namespace, name, port)
}

func namedPort(pod *corev1.Pod, name string) int {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return int(p.ContainerPort)
			}
		}
	}
	return 0
}

// forwardPod opens a port-forward from a free local port to the pod's port.
func (k *kube) forwardPod(pod *corev1.Pod, port int) (int, func(), error) {
	transport, upgrader, err := spdy.RoundTripperFor(k.cfg)
	if err != nil {
		return 0, nil, err
	}
	url := k.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: %w", pod.Namespace, pod.Name, port, err)
	case <-time.After(15 * time.Second):
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d not ready after 15s", pod.Namespace, pod.Name, port)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: no local port", pod.Namespace, pod.Name, port)
	}
	return int(ports[0].Local), func() { close(stop) }, nil
}
