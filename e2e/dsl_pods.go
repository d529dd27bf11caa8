package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// notStarted is a pod a check waits for: retried until the expectation's
// timeout, then the expectation is skipped (the container never started).
type notStarted struct{ reason string }

func (n *notStarted) Error() string { return n.reason }

// leaseHolder resolves leaderElection: the pod named by the Lease's
// holderIdentity (up to the first "_", as controller-runtime writes it),
// in the Lease's namespace (default: the entry's).
func (k *kube) leaseHolder(ctx context.Context, l *LeaseRef, namespace string) (string, string, error) {
	leaseNS := l.Namespace
	if leaseNS == "" {
		leaseNS = namespace
	}
	if leaseNS == "" {
		leaseNS = "default"
	}
	lease, err := k.cs.CoordinationV1().Leases(leaseNS).Get(ctx, l.Lease, metav1.GetOptions{})
	if err != nil {
		return "", "", fmt.Errorf("lease %s/%s: %w", leaseNS, l.Lease, err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return "", "", fmt.Errorf("lease %s/%s has no holder yet", leaseNS, l.Lease)
	}
	holder, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return holder, leaseNS, nil
}

// runningPod finds the pod a container check acts on, once it runs.
func (k *kube) runningPod(ctx context.Context, t Target) (*corev1.Pod, error) {
	if k.noNodes {
		return nil, cannotRunf("%s", noContainers)
	}
	namespace := t.Namespace
	if namespace == "" {
		namespace = "default"
	}
	var pods []corev1.Pod
	switch {
	case t.Lease != nil:
		name, leaseNS, err := k.leaseHolder(ctx, t.Lease, t.Namespace)
		if err != nil {
			return nil, err
		}
		namespace, t.Name = leaseNS, name
		fallthrough
	case t.Name != "":
		p, err := k.cs.CoreV1().Pods(namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, &notStarted{reason: fmt.Sprintf("pod %s/%s does not exist", namespace, t.Name)}
		} else if err != nil {
			return nil, err
		}
		pods = []corev1.Pod{*p}
	default:
		l, err := k.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: t.LabelSelector})
		if err != nil {
			return nil, err
		}
		if len(l.Items) == 0 {
			return nil, &notStarted{reason: fmt.Sprintf("no pod in %s matches %s", namespace, t.LabelSelector)}
		}
		pods = l.Items
	}
	for i := range pods {
		if pods[i].Status.Phase == corev1.PodRunning {
			return &pods[i], nil
		}
	}
	return nil, &notStarted{reason: fmt.Sprintf("pod %s/%s never started running (phase %s%s)", namespace, pods[0].Name, pods[0].Status.Phase, waitingReason(&pods[0]))}
}

func waitingReason(p *corev1.Pod) string {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting != nil && c.State.Waiting.Reason != "" {
			return ", " + c.State.Waiting.Reason
		}
	}
	return ""
}

// logs is `kubectl logs`: a pod's container logs (with a label selector,
// the last 10 lines of each matching pod, as kubectl).
func (k *kube) logs(ctx context.Context, l *KLogs) (string, error) {
	pod, err := k.runningPod(ctx, l.Target)
	if err != nil {
		return "", err
	}
	opts := &corev1.PodLogOptions{Container: l.Container}
	if l.Since > 0 {
		s := int64(l.Since.Seconds())
		opts.SinceSeconds = &s
	}
	if l.Target.LabelSelector != "" {
		tail := int64(10)
		opts.TailLines = &tail
	}
	raw, err := k.cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("logs of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return l.Extract.apply(string(raw))
}

// execIn runs command in a container and returns its combined output.
func (k *kube) execIn(ctx context.Context, pod *corev1.Pod, container string, command []string) (string, error) {
	req := k.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(k.cfg, "POST", req.URL())
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &out}); err != nil {
		return out.String(), fmt.Errorf("exec in %s/%s: %w\noutput: %s", pod.Namespace, pod.Name, err, out.String())
	}
	return out.String(), nil
}

// exec is `kubectl exec POD -- COMMAND`.
func (k *kube) exec(ctx context.Context, x *KExec) (string, error) {
	pod, err := k.runningPod(ctx, x.Target)
	if err != nil {
		return "", err
	}
	out, err := k.execIn(ctx, pod, x.Container, x.Command)
	if err != nil {
		return "", err
	}
	return x.Extract.apply(out)
}

// cp is kubectl.cp: a file's content read out of a container (with cat,
// where kubectl cp uses tar).
func (k *kube) cp(ctx context.Context, c *KCp) (string, error) {
	pod, err := k.runningPod(ctx, c.Target)
	if err != nil {
		return "", err
	}
	out, err := k.execIn(ctx, pod, c.Container, []string{"cat", c.Src})
	if err != nil {
		return "", err
	}
	return c.Extract.apply(out)
}

// top is `kubectl top pod|node`: usage from the metrics API
// (metrics.k8s.io, served by metrics-server).
func (k *kube) top(ctx context.Context, t *KTop) (string, error) {
	if k.noNodes {
		return "", cannotRunf("%s", noContainers)
	}
	pods := strings.HasPrefix(strings.ToLower(t.Target.Kind), "pod")
	res := schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "nodes"}
	var l *unstructured.UnstructuredList
	var err error
	if pods {
		res.Resource = "pods"
		namespace := t.Target.Namespace
		if namespace == "" {
			namespace = "default"
		}
		l, err = k.dyn.Resource(res).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: t.Target.LabelSelector})
	} else {
		l, err = k.dyn.Resource(res).List(ctx, metav1.ListOptions{})
	}
	if apierrors.IsNotFound(err) {
		return "", cannotRunf("kubectl top needs the metrics API (metrics.k8s.io, from metrics-server), which this cluster does not serve")
	} else if err != nil {
		return "", err
	}
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tCPU(cores)\tMEMORY(bytes)")
	for _, m := range l.Items {
		if t.Target.Name != "" && m.GetName() != t.Target.Name {
			continue
		}
		usages := []map[string]any{}
		if pods {
			cs, _, _ := unstructured.NestedSlice(m.Object, "containers")
			for _, c := range cs {
				cm, _ := c.(map[string]any)
				u, _ := cm["usage"].(map[string]any)
				if t.Containers {
					fmt.Fprintf(w, "%s/%s\t%s\t%s\n", m.GetName(), cm["name"], cpu(u), mem(u))
				}
				usages = append(usages, u)
			}
		} else {
			u, _, _ := unstructured.NestedMap(m.Object, "usage")
			usages = append(usages, u)
		}
		if !t.Containers || !pods {
			fmt.Fprintf(w, "%s\t%s\t%s\n", m.GetName(), sum(usages, "cpu", true), sum(usages, "memory", false))
		}
	}
	w.Flush()
	return b.String(), nil
}

func cpu(u map[string]any) string { return sum([]map[string]any{u}, "cpu", true) }
func mem(u map[string]any) string { return sum([]map[string]any{u}, "memory", false) }

// sum adds quantities as kubectl top prints them: millicores, Mi.
func sum(usages []map[string]any, key string, milli bool) string {
	total := resource.Quantity{}
	for _, u := range usages {
		if s, ok := u[key].(string); ok {
			if q, err := resource.ParseQuantity(s); err == nil {
				total.Add(q)
			}
		}
	}
	if milli {
		return fmt.Sprintf("%dm", total.MilliValue())
	}
	return fmt.Sprintf("%dMi", total.Value()/(1024*1024))
}
