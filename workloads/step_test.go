package workloads

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// fakeCluster is an in-memory client serving the status subresource of the
// simulated kinds; it counts the writes that are not status writes.
func fakeCluster(objs []client.Object, specWrites *int) client.Client {
	return fake.NewClientBuilder().
		WithObjects(objs...).
		WithStatusSubresource(Objects()...).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				*specWrites++
				return c.Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				*specWrites++
				return c.Patch(ctx, obj, p, opts...)
			},
		}).
		Build()
}

func TestStepSimulatesEveryKind(t *testing.T) {
	var specWrites int
	c := fakeCluster(everyKind("ns"), &specWrites)
	n, err := Step(context.Background(), c, t0)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(everyKind("ns")) {
		t.Errorf("Step wrote %d statuses, want %d (one per object)", n, len(everyKind("ns")))
	}
	if specWrites != 0 {
		t.Errorf("Step made %d writes outside the status subresource, want none", specWrites)
	}
	checkSimulated(t, c, "ns")

	// Nothing changed: the next steps write nothing, not even later.
	for _, at := range []time.Time{t0, t0.Add(time.Hour)} {
		if n, err := Step(context.Background(), c, at); err != nil || n != 0 {
			t.Errorf("a second Step at %s wrote %d statuses (err %v), want 0", at, n, err)
		}
	}
}

func TestStepFollowsScaling(t *testing.T) {
	var specWrites int
	c := fakeCluster([]client.Object{newDeployment("ns", "web", 1)}, &specWrites)
	ctx := context.Background()
	if _, err := Step(ctx, c, t0); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	if err := c.Get(ctx, key, &d); err != nil {
		t.Fatal(err)
	}
	five := int32(5)
	d.Spec.Replicas = &five
	if err := c.Update(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if n, err := Step(ctx, c, t0.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("Step after scaling wrote %d (err %v), want 1", n, err)
	}
	if err := c.Get(ctx, key, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status.AvailableReplicas != 5 {
		t.Errorf("availableReplicas after scaling to 5 = %d", d.Status.AvailableReplicas)
	}
	// The Available condition did not transition: its time stays.
	for _, cond := range d.Status.Conditions {
		if cond.Type == appsv1.DeploymentAvailable && !cond.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("Available lastTransitionTime = %s, want the first step's %s", cond.LastTransitionTime, t0)
		}
	}
}

func TestStepListOptionsRestrict(t *testing.T) {
	var specWrites int
	c := fakeCluster([]client.Object{newDeployment("a", "web", 1), newDeployment("b", "web", 1)}, &specWrites)
	if n, err := Step(context.Background(), c, t0, client.InNamespace("a")); err != nil || n != 1 {
		t.Fatalf("Step in namespace a wrote %d (err %v), want 1", n, err)
	}
	var d appsv1.Deployment
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "b", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status.AvailableReplicas != 0 {
		t.Errorf("the Deployment outside the namespace got a status: %+v", d.Status)
	}
}

func TestLeftAlone(t *testing.T) {
	suspended := newJob("ns", "later")
	yes := true
	suspended.Spec.Suspend = &yes
	done := newPod("ns", "done")
	done.Status.Phase = corev1.PodSucceeded
	cases := []struct {
		name string
		obj  client.Object
	}{
		{"suspended job", suspended},
		{"pod that finished", done},
		{"service (not simulated)", &corev1.Service{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var specWrites int
			c := fakeCluster(nil, &specWrites)
			if wrote, err := Advance(context.Background(), c, tc.obj, t0); err != nil || wrote {
				t.Errorf("Advance wrote %v (err %v), want it left alone", wrote, err)
			}
		})
	}
}

func TestAdvanceGivenObject(t *testing.T) {
	var specWrites int
	j := newJob("ns", "once", "false")
	c := fakeCluster([]client.Object{j}, &specWrites)
	ctx := context.Background()
	var got batchv1.Job
	if err := c.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "once"}, &got); err != nil {
		t.Fatal(err)
	}
	if wrote, err := Advance(ctx, c, &got, t0); err != nil || !wrote {
		t.Fatalf("Advance = %v, %v; want written", wrote, err)
	}
	if !hasJobCondition(&got, batchv1.JobFailed) {
		t.Errorf("a Job running `false` did not fail: %+v", got.Status)
	}
	// A finished Job stays as it is.
	if wrote, err := Advance(ctx, c, &got, t0.Add(time.Hour)); err != nil || wrote {
		t.Errorf("Advance of a failed Job wrote %v (err %v)", wrote, err)
	}
}
