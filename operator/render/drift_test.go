package render

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Unit tests of the drift comparison on hand-made objects: what the API
// server defaults is not drift, what the katalog does not manage is never
// compared, corrections keep everyone else's fields.

func managedChild(kind string, want client.Object, fields ...string) *Child {
	m := map[string]any{}
	for _, f := range fields {
		m[f] = true
	}
	return &Child{Kind: kind, Fields: m, Typed: want}
}

func deploymentWith(f func(d *appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"orkestra-owner": "shop"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"orkestra-owner": "shop"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "web",
					Image: "nginx:1",
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
						Path: "/ready", Port: intstr.FromInt32(8080),
					}}},
					Env: []corev1.EnvVar{{Name: "A", Value: "1"}},
				}}},
			},
		},
	}
	if f != nil {
		f(d)
	}
	return d
}

func TestDriftIgnoresServerDefaultsAndUnmanagedFields(t *testing.T) {
	want := deploymentWith(nil)
	live := deploymentWith(func(d *appsv1.Deployment) {
		// What the API server fills in.
		p := d.Spec.Template.Spec.Containers[0].ReadinessProbe
		p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 10, 1, 3
		p.HTTPGet.Scheme = corev1.URISchemeHTTP
		d.Spec.Template.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
		d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		// What someone else added.
		d.Labels["theirs"] = "x"
		d.Spec.MinReadySeconds = 5
		// Unmanaged by this declaration: replicas.
		d.Spec.Replicas = ptr.To[int32](9)
	})
	d, err := Diff(managedChild("deployments", want, "image", "readinessProbe", "env"), live)
	if err != nil {
		t.Fatal(err)
	}
	if !d.None() {
		t.Fatalf("drift %v on server defaults and unmanaged fields", d.Fields)
	}
}

func TestDriftCorrectsManagedFieldsOnly(t *testing.T) {
	want := deploymentWith(nil)
	live := deploymentWith(func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr.To[int32](5)
		d.Spec.Template.Spec.Containers[0].Image = "evil"
		d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "B", Value: "2"})
		d.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path = "/other"
		d.Spec.MinReadySeconds = 5
		d.Labels = map[string]string{"theirs": "x"}
	})
	d, err := Diff(managedChild("deployments", want, "replicas", "image", "env", "readinessProbe"), live)
	if err != nil {
		t.Fatal(err)
	}
	g := live
	if !reflect.DeepEqual(d.Fields, []string{"env", "image", "labels", "readinessProbe", "replicas"}) || d.Recreate {
		t.Errorf("drift = %+v", d)
	}
	c := g.Spec.Template.Spec.Containers[0]
	if *g.Spec.Replicas != 2 || c.Image != "nginx:1" || len(c.Env) != 1 || c.ReadinessProbe.HTTPGet.Path != "/ready" {
		t.Errorf("not corrected: %+v", g.Spec)
	}
	if g.Spec.MinReadySeconds != 5 || g.Labels["theirs"] != "x" || g.Labels["orkestra-owner"] != "shop" {
		t.Errorf("others' fields lost: minReadySeconds %d labels %v", g.Spec.MinReadySeconds, g.Labels)
	}
}

func TestDriftRenamedContainerIsReplaced(t *testing.T) {
	want := deploymentWith(nil)
	live := deploymentWith(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Name = "old" })
	d, _ := Diff(managedChild("deployments", want, "image"), live)
	g := live
	if !reflect.DeepEqual(d.Fields, []string{"containerName"}) || len(g.Spec.Template.Spec.Containers) != 1 || g.Spec.Template.Spec.Containers[0].Name != "web" {
		t.Errorf("drift %v containers %v", d.Fields, g.Spec.Template.Spec.Containers)
	}
}

func TestDriftExplicitEmptyList(t *testing.T) {
	want := deploymentWith(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{} })
	live := deploymentWith(nil)
	d, _ := Diff(managedChild("deployments", want, "env"), live)
	if !reflect.DeepEqual(d.Fields, []string{"env"}) {
		t.Errorf("an env declared empty does not remove live variables: %v", d.Fields)
	}
}

func TestDriftPodsCompareByContainmentAndRecreate(t *testing.T) {
	pod := func(image string, extraVolume bool) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: corev1.PodSpec{
				Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				Containers: []corev1.Container{{Name: "p", Image: image}},
			},
		}
		if extraVolume { // the service account token admission adds
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}})
		}
		return p
	}
	d, _ := Diff(managedChild("pods", pod("a", false), "image", "volumes"), pod("a", true))
	if !d.None() {
		t.Errorf("injected volume is drift: %v", d.Fields)
	}
	d, _ = Diff(managedChild("pods", pod("b", false), "image", "volumes"), pod("a", true))
	if !d.Recreate || !reflect.DeepEqual(d.Fields, []string{"image"}) {
		t.Errorf("pod drift = %+v, want a recreate for image", d)
	}
}

func TestDriftServicePorts(t *testing.T) {
	svc := func(tp corev1.ServiceType, nodePort int32) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "s"},
			Spec: corev1.ServiceSpec{
				Type:     tp,
				Selector: map[string]string{"a": "b"},
				Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP, NodePort: nodePort}},
			},
		}
	}
	// An allocated nodePort the katalog does not set is not drift.
	d, _ := Diff(managedChild("services", svc(corev1.ServiceTypeNodePort, 0), "type", "port"), svc(corev1.ServiceTypeNodePort, 30080))
	if !d.None() {
		t.Errorf("allocated nodePort is drift: %v", d.Fields)
	}
	// NodePort → ClusterIP drops the node port.
	live := svc(corev1.ServiceTypeNodePort, 30080)
	d, _ = Diff(managedChild("services", svc(corev1.ServiceTypeClusterIP, 0), "type", "port"), live)
	if !reflect.DeepEqual(d.Fields, []string{"port", "type"}) || live.Spec.Ports[0].NodePort != 0 || live.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("drift %v live %+v", d.Fields, live.Spec)
	}
	// A target port change keeps the allocated node port.
	live = svc(corev1.ServiceTypeNodePort, 30080)
	want := svc(corev1.ServiceTypeNodePort, 0)
	want.Spec.Ports[0].TargetPort = intstr.FromInt32(9090)
	d, _ = Diff(managedChild("services", want, "type", "port"), live)
	if !reflect.DeepEqual(d.Fields, []string{"port"}) || live.Spec.Ports[0].NodePort != 30080 || live.Spec.Ports[0].TargetPort.IntValue() != 9090 {
		t.Errorf("drift %v live ports %+v", d.Fields, live.Spec.Ports)
	}
	// headless is immutable: recreate.
	headless := svc(corev1.ServiceTypeClusterIP, 0)
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	d, _ = Diff(managedChild("services", headless, "headless"), svc(corev1.ServiceTypeClusterIP, 0))
	if !d.Recreate {
		t.Errorf("headless change = %+v, want a recreate", d)
	}
}

func TestDriftSecretsConfigMapsPVCs(t *testing.T) {
	secret := func(tp corev1.SecretType, v string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Type: tp, Data: map[string][]byte{"k": []byte(v)}}
	}
	d, _ := Diff(managedChild("secrets", secret(corev1.SecretTypeOpaque, "a"), "data"), secret(corev1.SecretTypeOpaque, "a"))
	if !d.None() {
		t.Errorf("equal secrets drift: %v", d.Fields)
	}
	d, _ = Diff(managedChild("secrets", secret("kubernetes.io/tls", "a"), "type", "data"), secret(corev1.SecretTypeOpaque, "b"))
	if !d.Recreate || !reflect.DeepEqual(d.Fields, []string{"data", "type"}) {
		t.Errorf("secret type change = %+v", d)
	}
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: data}
	}
	live := cm(map[string]string{"a": "1", "extra": "x"})
	d, _ = Diff(managedChild("configMaps", cm(map[string]string{"a": "1"}), "data"), live)
	if !reflect.DeepEqual(d.Fields, []string{"data"}) || len(live.Data) != 1 {
		t.Errorf("config map data is the katalog's: %v %v", d.Fields, live)
	}
	pvc := func(q string) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
		p.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(q)}
		return p
	}
	d, _ = Diff(managedChild("persistentVolumeClaims", pvc("1Gi"), "storage"), pvc("1024Mi"))
	if !d.None() {
		t.Errorf("equal quantities drift: %v", d.Fields)
	}
	d, _ = Diff(managedChild("persistentVolumeClaims", pvc("2Gi"), "storage"), pvc("1Gi"))
	if !reflect.DeepEqual(d.Fields, []string{"storage"}) {
		t.Errorf("storage growth = %v", d.Fields)
	}
}

func TestDriftCustomMergesDeclaredFields(t *testing.T) {
	want := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "x/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "t", "labels": map[string]any{"orkestra-owner": "shop"}},
		"spec":     map[string]any{"size": int64(2), "nested": map[string]any{"color": "blue"}},
	}}
	live := want.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, "red", "spec", "nested", "color")
	_ = unstructured.SetNestedField(live.Object, "kept", "spec", "nested", "theirs")
	_ = unstructured.SetNestedField(live.Object, map[string]any{"ready": true}, "status")
	c := &Child{Kind: "custom", Object: want, Fields: map[string]any{"spec": true}}
	d, _ := Diff(c, live)
	color, _, _ := unstructured.NestedString(live.Object, "spec", "nested", "color")
	theirs, _, _ := unstructured.NestedString(live.Object, "spec", "nested", "theirs")
	if !reflect.DeepEqual(d.Fields, []string{"spec"}) || color != "blue" || theirs != "kept" {
		t.Errorf("drift %v spec %v", d.Fields, live.Object["spec"])
	}
	d, _ = Diff(c, live)
	if !d.None() {
		t.Errorf("corrected object still drifts: %v", d.Fields)
	}
}
