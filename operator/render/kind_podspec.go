package render

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The pod every workload runs: its template (labels, annotations), its spec
// and its one container, built from the simplified pod fields, and how
// drift in them is compared.

// selectorLabels select exactly this child's pods.
func (b *builder) selectorLabels() map[string]string {
	return map[string]string{
		LabelOwner: LabelValue(b.r.cr.GetName()),
		LabelChild: LabelValue(b.c.Name),
	}
}

// podTemplate carries the object's labels (without the managed label: pods
// of a workload are not Orkestra's children), podLabels and the selector
// labels; podAnnotations.
func (b *builder) podTemplate(meta metav1.ObjectMeta, selector map[string]string, restartPolicy corev1.RestartPolicy) corev1.PodTemplateSpec {
	labels := map[string]string{}
	for k, v := range meta.Labels {
		if k != LabelManaged {
			labels[k] = v
		}
	}
	for k, v := range b.f.strMap("podLabels") {
		labels[k] = v
	}
	for k, v := range selector {
		labels[k] = v
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: b.f.strMap("podAnnotations")},
		Spec:       b.podSpec(restartPolicy),
	}
}

func (b *builder) podSpec(restartPolicy corev1.RestartPolicy) corev1.PodSpec {
	f := &b.f
	ps := corev1.PodSpec{
		Containers:         []corev1.Container{b.container()},
		ServiceAccountName: f.str("serviceAccountName"),
		NodeSelector:       f.strMap("nodeSelector"),
		ImagePullSecrets:   localRefs(f.strList("imagePullSecrets")),
		RestartPolicy:      restartPolicy,
	}
	if f.has("restartPolicy") {
		ps.RestartPolicy = corev1.RestartPolicy(f.str("restartPolicy"))
	}
	f.into("tolerations", &ps.Tolerations)
	f.into("volumes", &ps.Volumes)
	f.into("podSecurityContext", &ps.SecurityContext)
	return ps
}

func localRefs(names []string) []corev1.LocalObjectReference {
	if names == nil {
		return nil
	}
	out := make([]corev1.LocalObjectReference, len(names))
	for i, n := range names {
		out[i] = corev1.LocalObjectReference{Name: n}
	}
	return out
}

// ContainerName is the name of a child's container: containerName, else the
// child's name when it is a valid container name, else DefaultContainerName.
func ContainerName(containerName, childName string) string {
	if containerName != "" {
		return containerName
	}
	if len(validation.IsDNS1123Label(childName)) == 0 {
		return childName
	}
	return DefaultContainerName
}

func (b *builder) container() corev1.Container {
	f := &b.f
	c := corev1.Container{
		Name:            ContainerName(f.str("containerName"), b.c.Name),
		Image:           f.str("image"),
		ImagePullPolicy: corev1.PullPolicy(f.str("imagePullPolicy")),
		Command:         f.strList("command"),
		Args:            f.strList("args"),
		WorkingDir:      f.str("workingDirectory"),
	}
	if port := f.int32("port", 1, 65535); port != nil {
		c.Ports = []corev1.ContainerPort{{ContainerPort: *port, Protocol: b.protocol()}}
	}
	c.Env = b.env()
	f.into("envFrom", &c.EnvFrom)
	f.into("resources", &c.Resources)
	f.into("livenessProbe", &c.LivenessProbe)
	f.into("readinessProbe", &c.ReadinessProbe)
	f.into("startupProbe", &c.StartupProbe)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		numericPort(p)
	}
	f.into("securityContext", &c.SecurityContext)
	f.into("volumeMounts", &c.VolumeMounts)
	return c
}

// envSources are the valueFrom sources an entry of the map form of env may
// give directly (`API_KEY: {secretKeyRef: …}`), as upstream katalogs write.
var envSources = []string{"secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef"}

// env reads env as Kubernetes writes it (a list of {name, value|valueFrom})
// or as the map form of the original katalogs, keyed by name: a scalar is
// the value; a map holds value, valueFrom, or a valueFrom source directly.
// Map entries are sorted by name so the container does not drift.
func (b *builder) env() []corev1.EnvVar {
	f := &b.f
	m, ok := f.fields["env"].(map[string]any)
	if !ok {
		var out []corev1.EnvVar
		f.into("env", &out)
		return out
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]corev1.EnvVar, 0, len(m))
	for _, name := range names {
		v := m[name]
		if s, ok := scalarString(v); ok {
			out = append(out, corev1.EnvVar{Name: name, Value: s})
			continue
		}
		entry, ok := v.(map[string]any)
		if !ok {
			f.fail("env."+name, "expects a value or an object with value, valueFrom or one of %s, got %s", strings.Join(envSources, ", "), describe(v))
			return nil
		}
		spec := map[string]any{"name": name}
		from := map[string]any{}
		for k, x := range entry {
			if containsString(envSources, k) {
				from[k] = x
			} else {
				spec[k] = x
			}
		}
		if len(from) > 0 {
			if _, both := spec["valueFrom"]; both {
				f.fail("env."+name, "give either valueFrom or %s directly, not both", strings.Join(envSources, "/"))
				return nil
			}
			spec["valueFrom"] = from
		}
		var ev corev1.EnvVar
		sub := fieldReader{fields: map[string]any{name: spec}, base: f.path("env")}
		sub.into(name, &ev)
		if sub.err != nil {
			f.err = sub.err
			return nil
		}
		out = append(out, ev)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (b *builder) protocol() corev1.Protocol {
	p := b.f.str("protocol")
	if p == "" {
		return corev1.ProtocolTCP
	}
	return corev1.Protocol(strings.ToUpper(p))
}

func diffTemplate(d *Drift, m Managed, w, g *corev1.PodTemplateSpec) {
	if !subsetMap(w.Labels, g.Labels) {
		g.Labels = mergeMap(g.Labels, w.Labels)
		d.add("podLabels")
	}
	if !subsetMap(w.Annotations, g.Annotations) {
		g.Annotations = mergeMap(g.Annotations, w.Annotations)
		d.add("podAnnotations")
	}
	diffPodSpec(d, m, &w.Spec, &g.Spec, false)
}

// diffPodSpec compares the pod-level and container-level simplified fields.
// For a live Pod (pod=true) lists are compared by containment: admission
// adds volumes, mounts and tolerations to running pods.
func diffPodSpec(d *Drift, m Managed, w, g *corev1.PodSpec, pod bool) {
	list := subset
	if pod {
		list = contains
	}
	if m.has("serviceAccountName") && w.ServiceAccountName != g.ServiceAccountName {
		g.ServiceAccountName = w.ServiceAccountName
		d.add("serviceAccountName")
	}
	if m.has("nodeSelector") && !eqStringMap(w.NodeSelector, g.NodeSelector) {
		g.NodeSelector = w.NodeSelector
		d.add("nodeSelector")
	}
	if m.has("imagePullSecrets") && !subset(w.ImagePullSecrets, g.ImagePullSecrets) {
		g.ImagePullSecrets = w.ImagePullSecrets
		d.add("imagePullSecrets")
	}
	if m.has("tolerations") && !list(w.Tolerations, g.Tolerations) {
		g.Tolerations = w.Tolerations
		d.add("tolerations")
	}
	if m.has("volumes") && !list(w.Volumes, g.Volumes) {
		g.Volumes = w.Volumes
		d.add("volumes")
	}
	if m.has("podSecurityContext") && !subset(w.SecurityContext, g.SecurityContext) {
		g.SecurityContext = w.SecurityContext
		d.add("podSecurityContext")
	}
	if m.has("restartPolicy") && w.RestartPolicy != g.RestartPolicy {
		g.RestartPolicy = w.RestartPolicy
		d.add("restartPolicy")
	}
	wc := &w.Containers[0]
	var gc *corev1.Container
	for i := range g.Containers {
		if g.Containers[i].Name == wc.Name {
			gc = &g.Containers[i]
		}
	}
	if gc == nil {
		// The container was renamed or removed: ours replaces them.
		g.Containers = []corev1.Container{*wc}
		d.add("containerName")
		return
	}
	diffContainer(d, m, wc, gc, list)
}

func diffContainer(d *Drift, m Managed, wc, gc *corev1.Container, list func(want, got any) bool) {
	if m.has("image") && wc.Image != gc.Image {
		gc.Image = wc.Image
		d.add("image")
	}
	if m.has("imagePullPolicy") && wc.ImagePullPolicy != gc.ImagePullPolicy {
		gc.ImagePullPolicy = wc.ImagePullPolicy
		d.add("imagePullPolicy")
	}
	if m.has("command") && !eqStrings(wc.Command, gc.Command) {
		gc.Command = wc.Command
		d.add("command")
	}
	if m.has("args") && !eqStrings(wc.Args, gc.Args) {
		gc.Args = wc.Args
		d.add("args")
	}
	if m.has("workingDirectory") && wc.WorkingDir != gc.WorkingDir {
		gc.WorkingDir = wc.WorkingDir
		d.add("workingDirectory")
	}
	if (m.has("port") || m.has("protocol")) && !subset(wc.Ports, gc.Ports) {
		gc.Ports = wc.Ports
		d.add("port")
	}
	if m.has("env") && !list(wc.Env, gc.Env) {
		gc.Env = wc.Env
		d.add("env")
	}
	if m.has("envFrom") && !list(wc.EnvFrom, gc.EnvFrom) {
		gc.EnvFrom = wc.EnvFrom
		d.add("envFrom")
	}
	if m.has("resources") && !subset(wc.Resources, gc.Resources) {
		gc.Resources = wc.Resources
		d.add("resources")
	}
	if m.has("livenessProbe") && !subset(wc.LivenessProbe, gc.LivenessProbe) {
		gc.LivenessProbe = wc.LivenessProbe
		d.add("livenessProbe")
	}
	if m.has("readinessProbe") && !subset(wc.ReadinessProbe, gc.ReadinessProbe) {
		gc.ReadinessProbe = wc.ReadinessProbe
		d.add("readinessProbe")
	}
	if m.has("startupProbe") && !subset(wc.StartupProbe, gc.StartupProbe) {
		gc.StartupProbe = wc.StartupProbe
		d.add("startupProbe")
	}
	if m.has("securityContext") && !subset(wc.SecurityContext, gc.SecurityContext) {
		gc.SecurityContext = wc.SecurityContext
		d.add("securityContext")
	}
	if m.has("volumeMounts") && !list(wc.VolumeMounts, gc.VolumeMounts) {
		gc.VolumeMounts = wc.VolumeMounts
		d.add("volumeMounts")
	}
}

// numericPort reads a probe's port written as a number in a string ("8080",
// as a legacy template renders it) as the number: a port name has a letter,
// so such a string can only mean the number.
func numericPort(p *corev1.Probe) {
	if p == nil {
		return
	}
	fix := func(port *intstr.IntOrString) {
		if port.Type == intstr.String {
			if n, err := strconv.ParseInt(port.StrVal, 10, 32); err == nil {
				*port = intstr.FromInt32(int32(n))
			}
		}
	}
	if p.HTTPGet != nil {
		fix(&p.HTTPGet.Port)
	}
	if p.TCPSocket != nil {
		fix(&p.TCPSocket.Port)
	}
}
