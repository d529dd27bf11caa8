package webhook

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fair sharing of the body budget under slow clients.
//
//   - A request holds budget only for bytes it has received: its body buffer
//     starts at minBodyChunk and doubles when full, and the first chunk is
//     charged only once the body is complete (until then it is part of its
//     connection's memory, like net/http's own 4 KiB read buffer). A body
//     that trickles never charges the budget at all.
//   - Waiting requests are served in order of the body they still expect
//     (declared Content-Length less bytes received), shortest first: a
//     review close to completion returns its share soonest, and a client
//     that declares more than it sends ranks last. The last quarter of the
//     budget (the headroom) goes only to bodies that expect at most that
//     much more, so that bodies far from complete cannot take it all: a
//     review sent at once finds room even while large bodies wait.
//   - While a request waits, every body being read that has stalled loses
//     its share: its read is cut short, it is answered 408 and its
//     connection closed. When even that and the return of every share not
//     waiting could not serve the first waiter (bodies each holding part of
//     the budget and waiting for more), the waiting body holding the most
//     gives its share back (503, retry). As in Apache's mod_reqtimeout (MinRate) and
//     nginx's client_body_timeout, a body stalls when it pauses, or arrives
//     too slowly on average; unlike them, a slow body is cut only when
//     another request needs its share, so a slow link is served when nobody
//     waits.
const (
	// stallPause: a body that received nothing for this long has stalled.
	// The API server writes a review at once; a pause this long is a stalled
	// client or a broken network.
	stallPause = 250 * time.Millisecond
	// minBodyRate: after stallPause, a body that arrived at less than this
	// many bytes a second on average (time spent waiting for budget not
	// counted) has stalled: 64 KiB/s is 512 kbit/s.
	minBodyRate = 64 << 10
	// evictEvery is how often stalled bodies are looked for while requests
	// wait for budget.
	evictEvery = 50 * time.Millisecond
	// headroomShare: the headroom is 1/headroomShare of the budget.
	headroomShare = 4
)

// budget is the shared bound on request body bytes in flight.
type budget struct {
	size     int64
	headroom int64

	mu       sync.Mutex
	free     int64
	waiters  []*waiter            // by remaining body, then arrival
	seq      uint64               // arrivals
	reading  map[*charge]struct{} // bodies being read that can be cut
	evicting bool                 // the evictor runs
}

// waiter is a request waiting for need bytes, with remaining bytes of its
// body still to come.
type waiter struct {
	remaining int64
	need      int64
	seq       uint64
	since     time.Time
	preempted bool // ready was closed to make it give its share back
	c         *charge
	ready     chan struct{} // closed when granted or preempted
}

// errPreempted: a waiting request gave its share back to break a deadlock.
var errPreempted = errors.New("preempted")

func newBudget(size int64) *budget {
	return &budget{size: size, headroom: size / headroomShare, free: size, reading: map[*charge]struct{}{}}
}

// before orders waiters by remaining body, then by arrival.
func before(a, b *waiter) int {
	if c := cmp.Compare(a.remaining, b.remaining); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// reserve is what w must leave free: nothing for a body that expects at
// most the headroom; for the others the headroom, or less when the body
// could not fit beside it.
func (b *budget) reserve(w *waiter) int64 {
	if w.remaining <= b.headroom {
		return 0
	}
	return max(min(b.headroom, b.size-w.c.held-w.need), 0)
}

// acquire adds n bytes to c's share, waiting until ctx is done.
func (b *budget) acquire(ctx context.Context, c *charge, n int64) error {
	b.mu.Lock()
	w := &waiter{remaining: max(c.declared-c.received.Load(), 0), need: n, seq: b.seq, c: c}
	if len(b.waiters) == 0 && b.free-n >= b.reserve(w) {
		b.free -= n
		c.held += n
		b.mu.Unlock()
		return nil
	}
	w.since, w.ready = time.Now(), make(chan struct{})
	b.seq++
	i, _ := slices.BinarySearchFunc(b.waiters, w, before)
	b.waiters = slices.Insert(b.waiters, i, w)
	c.waiting = w
	b.grant() // it may go before the others
	if w.c.waiting == w {
		// Bodies already stalled give way now, not at the evictor's next
		// tick: a prompt review would wait up to evictEvery for them.
		b.evictStalled(w.since)
	}
	startEvictor := !b.evicting
	b.evicting = true
	b.mu.Unlock()
	if startEvictor {
		go b.evictWhileWaiting()
	}

	select {
	case <-w.ready:
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready:
			if w.preempted { // its share is gone and its body cut: say so
				return errPreempted
			}
			b.free += n // granted meanwhile: give it back
			c.held -= n
			b.grant()
		default:
			b.waiters = slices.DeleteFunc(b.waiters, func(x *waiter) bool { return x == w })
			b.endWait(w, time.Now())
			b.grant() // the first may have been blocking the others
		}
		return ctx.Err()
	}
	if w.preempted {
		return errPreempted
	}
	return nil
}

// endWait ends w's wait at now; b.mu is held. Waiting for budget is not a
// pause of the client's: the body's last progress is now.
func (b *budget) endWait(w *waiter, now time.Time) {
	w.c.waiting = nil
	w.c.waited += now.Sub(w.since)
	w.c.last.Store(now.UnixNano())
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.grant()
	b.mu.Unlock()
}

// grant serves waiters in order while the first fits; b.mu is held. The
// share and the end of the wait are recorded here, before the waiter runs,
// so that the evictor never sees a request granted but still waiting.
func (b *budget) grant() {
	now := time.Now()
	for len(b.waiters) > 0 && b.free-b.waiters[0].need >= b.reserve(b.waiters[0]) {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.free -= w.need
		w.c.held += w.need
		b.endWait(w, now)
		close(w.ready)
	}
}

// evictWhileWaiting evicts stalled bodies every evictEvery while requests
// wait.
func (b *budget) evictWhileWaiting() {
	for {
		b.mu.Lock()
		if len(b.waiters) == 0 {
			b.evicting = false
			b.mu.Unlock()
			return
		}
		b.evictStalled(time.Now())
		b.preemptIfDeadlocked()
		b.mu.Unlock()
		time.Sleep(evictEvery)
	}
}

// evictStalled cuts the reads of the stalled bodies that hold budget; b.mu
// is held. A body waiting for budget itself has not stalled: the wait is
// ours.
func (b *budget) evictStalled(now time.Time) {
	for c := range b.reading {
		if c.waiting != nil || c.held == 0 || !c.stalled(now) {
			continue
		}
		// Marked before the cut: the read it ends must see why.
		c.evicted.Store(true)
		if !c.cut() {
			c.evicted.Store(false)
			continue
		}
		delete(b.reading, c)
	}
}

// preemptIfDeadlocked makes the waiting body that holds the most give its
// share back when the first waiter could not be served even if every share
// not waiting came back; b.mu is held.
func (b *budget) preemptIfDeadlocked() {
	if len(b.waiters) == 0 {
		return
	}
	head := b.waiters[0]
	var waitingHeld int64
	var victim *charge
	for c := range b.reading {
		if c.waiting == nil || c.held == 0 {
			continue
		}
		waitingHeld += c.held
		if c != head.c && (victim == nil || c.held > victim.held) {
			victim = c
		}
	}
	if victim == nil || b.size-waitingHeld-head.need >= b.reserve(head) {
		return
	}
	w := victim.waiting
	b.waiters = slices.DeleteFunc(b.waiters, func(x *waiter) bool { return x == w })
	w.preempted = true
	b.endWait(w, time.Now())
	// Its connection's unread body is not waited for. The read is cut before
	// the waiter wakes: its handler answers and returns at once, and a
	// ResponseController may not be used after that.
	delete(b.reading, victim)
	victim.cut()
	close(w.ready)
}

// charge is one request's share of the budget.
type charge struct {
	b *budget
	// cut ends the body's read at once (a read deadline in the past); it
	// reports false when the connection cannot (then the body is not
	// evicted).
	cut      func() bool
	start    time.Time
	declared int64 // the body's Content-Length, or the largest body accepted

	// under b.mu
	held    int64
	waiting *waiter // nil: not waiting
	waited  time.Duration

	received atomic.Int64
	last     atomic.Int64 // UnixNano of the last byte received or budget granted
	evicted  atomic.Bool
}

// newCharge starts a request's charge for a body of declared bytes; cut,
// when not nil, lets the budget evict its body.
func (b *budget) newCharge(start time.Time, declared int64, cut func() bool) *charge {
	c := &charge{b: b, cut: cut, start: start, declared: declared}
	c.last.Store(start.UnixNano())
	return c
}

// reading registers c's body as being read, its first byte received at
// now: from now on it can be evicted while it holds budget.
func (c *charge) reading(now time.Time) {
	c.progress(now, 1)
	if c.cut == nil {
		return
	}
	c.b.mu.Lock()
	c.b.reading[c] = struct{}{}
	c.b.mu.Unlock()
}

// doneReading ends c's exposure to eviction: its body is complete (or
// failed), and what it holds is its review's.
func (c *charge) doneReading() {
	if c.cut == nil {
		return
	}
	c.b.mu.Lock()
	delete(c.b.reading, c)
	c.b.mu.Unlock()
}

// progress records n bytes received at now.
func (c *charge) progress(now time.Time, n int) {
	c.received.Add(int64(n))
	c.last.Store(now.UnixNano())
}

// grow raises the charge to n bytes, waiting until ctx is done for other
// requests to return theirs or lose them to eviction.
func (c *charge) grow(ctx context.Context, n int64) error {
	c.b.mu.Lock()
	need := n - c.held
	c.b.mu.Unlock()
	if need <= 0 {
		return nil
	}
	return c.b.acquire(ctx, c, need) // ctx's error or errPreempted
}

func (c *charge) release() {
	c.doneReading()
	c.b.mu.Lock()
	held := c.held
	c.held = 0
	c.b.mu.Unlock()
	if held > 0 {
		c.b.release(held)
	}
}

// stalled reports whether c's body paused stallPause or, after that long,
// arrived at less than minBodyRate; b.mu is held.
func (c *charge) stalled(now time.Time) bool {
	if now.Sub(time.Unix(0, c.last.Load())) >= stallPause {
		return true
	}
	active := now.Sub(c.start) - c.waited
	return active >= stallPause && float64(c.received.Load()) < minBodyRate*active.Seconds()
}
