package webhook

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// testCharge is a charge whose cut is counted.
type testCharge struct {
	*charge
	cuts atomic.Int32
}

// newTestCharge starts a charge for a body of declared bytes that has
// received received bytes, the last of them ago.
func newTestCharge(b *budget, declared, received int64, ago time.Duration) *testCharge {
	tc := &testCharge{}
	now := time.Now()
	tc.charge = b.newCharge(now.Add(-ago), declared, func() bool { tc.cuts.Add(1); return true })
	tc.reading(now.Add(-ago))
	tc.received.Store(received)
	return tc
}

// mustGrow grows c to n, which must not take long.
func mustGrow(t *testing.T, c *testCharge, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.grow(ctx, n); err != nil {
		t.Fatalf("growing to %d: %v", n, err)
	}
}

// growAsync grows c to n in the background; the result arrives on the
// channel.
func growAsync(c *charge, n int64) chan error {
	done := make(chan error, 1)
	go func() { done <- c.grow(context.Background(), n) }()
	return done
}

// waitQueued waits until the budget has n waiters.
func waitQueued(t *testing.T, b *budget, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		got := len(b.waiters)
		b.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func granted(done chan error) bool {
	select {
	case err := <-done:
		return err == nil
	case <-time.After(50 * time.Millisecond):
		return false
	}
}

// Waiters are served by the body they still expect, shortest first; a body
// far from complete may not take the headroom (the last quarter).
func TestBudgetServesShortestRemainingFirst(t *testing.T) {
	b := newBudget(100)                                                          // headroom 25
	holderA, holderB := newTestCharge(b, 70, 70, 0), newTestCharge(b, 30, 30, 0) // complete
	mustGrow(t, holderA, 70)
	mustGrow(t, holderB, 30)
	far := newTestCharge(b, 1000, 950, 0)  // expects 50 more
	near := newTestCharge(b, 1000, 995, 0) // expects 5 more
	far2 := newTestCharge(b, 1000, 950, 0) // as far, later
	farDone := growAsync(far.charge, 10)
	waitQueued(t, b, 1)
	nearDone := growAsync(near.charge, 10)
	waitQueued(t, b, 2)
	far2Done := growAsync(far2.charge, 10)
	waitQueued(t, b, 3)

	holderA.release() // 70 free
	if !granted(nearDone) {
		t.Fatal("the body closest to complete was not served first")
	}
	// 60 free: the far bodies may take 10 each while 25 stay free.
	if !granted(farDone) || !granted(far2Done) {
		t.Fatal("the far bodies were not served, in order, with the headroom left")
	}
	if b.free != 40 {
		t.Fatalf("free %d, want 40", b.free)
	}

	// 40 free: a far body may not take 20 (it would leave 20 of the 25 of
	// headroom); a near one may take the headroom.
	far3 := newTestCharge(b, 1000, 500, 0)
	far3Done := growAsync(far3.charge, 20)
	if granted(far3Done) {
		t.Fatal("a body far from complete took the headroom")
	}
	near2 := newTestCharge(b, 30, 10, 0)
	mustGrow(t, near2, 30)
	if b.free != 10 {
		t.Fatalf("free %d, want 10", b.free)
	}
	near2.release()
	holderB.release() // 30 back: 70 free, enough for far3 beside the headroom
	if !granted(far3Done) {
		t.Fatal("the far body was not served once the headroom was free")
	}
}

// A body that needs more than the budget less the headroom to fit still
// gets it when nothing else holds budget.
func TestBudgetHeadroomNeverBlocksALoneBody(t *testing.T) {
	b := newBudget(100)
	c := newTestCharge(b, 100, 40, 0)
	mustGrow(t, c, 40)
	if !granted(growAsync(c.charge, 90)) {
		t.Fatal("a lone body growing to 90 of 100 waited for the headroom")
	}
}

// While a request waits, a body being read that paused stallPause, or
// arrives under minBodyRate, is cut and evicted; a body making progress, a
// body waiting for budget and a body that holds nothing are not.
func TestBudgetEvictsStalledBodies(t *testing.T) {
	b := newBudget(200)                                 // headroom 50
	paused := newTestCharge(b, 1000, 500, 2*stallPause) // 500 bytes, the last long ago
	slow := newTestCharge(b, 1000, 10, time.Second)
	slow.last.Store(time.Now().UnixNano()) // a byte just now, 10 in a second
	active := newTestCharge(b, 1<<30, 1<<30, 0)
	waiting := newTestCharge(b, 1000, 500, 2*stallPause)
	filler := newTestCharge(b, 1<<30, 1<<30, 0)
	idle := newTestCharge(b, 1000, 1, time.Hour) // holds nothing
	mustGrow(t, paused, 30)
	mustGrow(t, slow, 30)
	mustGrow(t, active, 20)
	mustGrow(t, waiting, 20)
	mustGrow(t, filler, 100) // nothing free
	waitingDone := growAsync(waiting.charge, 40)
	waitQueued(t, b, 1)
	waiter := newTestCharge(b, 10, 5, 0)
	waiterDone := growAsync(waiter.charge, 10)
	waitQueued(t, b, 2)
	deadline := time.Now().Add(5 * time.Second)
	for paused.cuts.Load() == 0 || slow.cuts.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("cuts: paused %d, slow %d; want both cut", paused.cuts.Load(), slow.cuts.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !paused.evicted.Load() || !slow.evicted.Load() {
		t.Error("a cut body is not marked evicted")
	}
	if n := active.cuts.Load() + filler.cuts.Load() + idle.cuts.Load() + waiting.cuts.Load(); n != 0 {
		t.Errorf("cut: active %d, filler %d, idle %d, waiting %d; want none", active.cuts.Load(), filler.cuts.Load(), idle.cuts.Load(), waiting.cuts.Load())
	}
	paused.release()
	slow.release()
	if !granted(waiterDone) {
		t.Fatal("the waiter was not served once the evicted bodies gave their shares back")
	}
	filler.release()
	if !granted(waitingDone) {
		t.Fatal("the waiting body was not served once the headroom was free")
	}
}

// Bodies that each hold part of the budget and wait for more would wait
// for ever: the one holding the most is preempted (errPreempted), and the
// others are served.
func TestBudgetPreemptsTheLargestWaitingHolder(t *testing.T) {
	b := newBudget(200) // headroom 50
	small := newTestCharge(b, 1000, 80, 0)
	large := newTestCharge(b, 2000, 70, 0)
	mustGrow(t, small, 80)
	mustGrow(t, large, 70) // 50 free
	smallDone := growAsync(small.charge, 160)
	largeDone := growAsync(large.charge, 140)
	select {
	case err := <-largeDone:
		if !errors.Is(err, errPreempted) {
			t.Fatalf("the largest waiting holder: %v, want errPreempted", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nobody was preempted")
	}
	if large.cuts.Load() != 1 {
		t.Errorf("the preempted body was cut %d times, want once (its unread body is not waited for)", large.cuts.Load())
	}
	large.release()
	if !granted(smallDone) {
		t.Fatal("the other holder was not served after the preemption")
	}
}

// A request whose context ends while it waits leaves the queue; a grant
// that came meanwhile goes back to the budget.
func TestBudgetWaitEndsWithItsContext(t *testing.T) {
	b := newBudget(100)
	holder := newTestCharge(b, 100, 100, 0)
	mustGrow(t, holder, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c := newTestCharge(b, 100, 10, 0)
	if err := c.grow(ctx, 10); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("grow: %v, want the context's deadline", err)
	}
	b.mu.Lock()
	queued := len(b.waiters)
	b.mu.Unlock()
	holder.release()
	if queued != 0 || b.free != 100 || c.held != 0 {
		t.Fatalf("after the wait: %d waiters, %d free, %d held; want 0, 100, 0", queued, b.free, c.held)
	}
}

// A waiter granted a share is no longer waiting from that moment, before
// its goroutine runs: the deadlock check does not count it a waiting holder
// (it closed the granted waiter's channel a second time: a panic), and the
// evictor does not take it for stalled (its wait ended now).
func TestBudgetGrantEndsTheWaitAtOnce(t *testing.T) {
	b := newBudget(200)                        // headroom 50
	far := newTestCharge(b, 1000, 40, 0)       // expects 960 more
	near := newTestCharge(b, 100, 60, 0)       // expects 40 more
	other := newTestCharge(b, 1<<30, 1<<30, 0) // complete, active
	mustGrow(t, far, 40)
	mustGrow(t, near, 50)
	mustGrow(t, other, 110) // nothing free
	nearDone := growAsync(near.charge, 90)
	waitQueued(t, b, 1)
	farDone := growAsync(far.charge, 140)
	waitQueued(t, b, 2)

	b.mu.Lock()
	b.free += 40 // part of other's share comes back, not yet granted
	other.held -= 40
	b.grant() // near (40 more) fits; far (100 more) waits
	if near.waiting != nil || near.held != 90 {
		t.Errorf("granted: waiting %v, held %d; want not waiting, 90", near.waiting, near.held)
	}
	// Counting near as a waiting holder, this is a deadlock, and near (the
	// largest) the one to preempt.
	b.preemptIfDeadlocked()
	b.evictStalled(time.Now())
	b.mu.Unlock()
	if !granted(nearDone) {
		t.Fatal("the granted waiter did not return its grant")
	}
	if near.cuts.Load() != 0 {
		t.Error("the evictor cut a body whose wait had just ended")
	}
	select {
	case err := <-farDone:
		t.Fatalf("the other waiter returned %v; it should still wait", err)
	default:
	}
	near.release()
	other.release()
	if !granted(farDone) {
		t.Fatal("the other waiter was not served")
	}
}

// A request that has to wait makes the bodies already stalled give way at
// once, not at the evictor's next tick (up to evictEvery later).
func TestBudgetWaiterEvictsStalledBodiesAtOnce(t *testing.T) {
	b := newBudget(100)
	stalled := newTestCharge(b, 1000, 500, 2*stallPause)
	mustGrow(t, stalled, 100) // nothing free
	b.mu.Lock()
	b.evicting = true // the evictor is between two ticks: it does not run
	b.mu.Unlock()
	waiter := newTestCharge(b, 10, 5, 0)
	waiterDone := growAsync(waiter.charge, 10)
	waitQueued(t, b, 1)
	if stalled.cuts.Load() != 1 || !stalled.evicted.Load() {
		t.Fatalf("the stalled body: cut %d times, evicted %v; want cut once and evicted as the waiter queued", stalled.cuts.Load(), stalled.evicted.Load())
	}
	stalled.release()
	if !granted(waiterDone) {
		t.Fatal("the waiter was not served once the stalled body gave its share back")
	}
}
