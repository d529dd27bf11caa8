package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// minBodyChunk is a body's first buffer: a review's body buffer starts at
// 4 KiB and doubles whenever it is full, so that it holds at most twice the
// bytes received (or 4 KiB). The first chunk is charged to the budget once
// the body is complete, growth as it happens.
const minBodyChunk = 4 << 10

// bodyClasses are the buffer sizes bodies grow through up to
// maxPooledBuffer (4, 8, 16, 32, 64 KiB), each reused through its own pool.
const bodyClasses = 5

// bodyPool reuses body buffers by size: growing through the sizes costs a
// copy, not an allocation.
type bodyPool [bodyClasses]sync.Pool // of *[]byte

// class is the pool of a buffer of capacity n, or -1.
func bodyClass(n int) int {
	for i, size := 0, minBodyChunk; i < bodyClasses; i, size = i+1, size*2 {
		if n == size {
			return i
		}
	}
	return -1
}

// get returns an empty buffer of capacity n.
func (p *bodyPool) get(n int) *[]byte {
	if i := bodyClass(n); i >= 0 {
		if b, ok := p[i].Get().(*[]byte); ok {
			*b = (*b)[:0]
			return b
		}
	}
	b := make([]byte, 0, n)
	return &b
}

func (p *bodyPool) put(b *[]byte) {
	if b == nil {
		return
	}
	if i := bodyClass(cap(*b)); i >= 0 {
		p[i].Put(b)
	}
}

var (
	errTooLarge = errors.New("request body too large")
	errBusy     = errors.New("request body budget exhausted")
	errEvicted  = errors.New("request body evicted")
)

// readBody reads at most h.max bytes of body into a buffer from h.bodies
// (nil when the body is empty), to be returned there once the review is
// answered. Nothing is allocated before the first byte arrives; then the
// buffer starts at minBodyChunk, charged once the body is complete, and
// doubles whenever it is full, each growth charged to the budget first.
// While the body is read, ch can be evicted: the read then fails with
// errEvicted.
func (h *ConvertHandler) readBody(ctx context.Context, ch *charge, body io.Reader) (*[]byte, error) {
	var first [1]byte
	if _, err := io.ReadFull(body, first[:]); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, readErr(err)
	}
	ch.reading(time.Now())
	defer ch.doneReading()
	limit := int(h.max)
	buf := h.bodies.get(min(minBodyChunk, limit+1))
	*buf = append(*buf, first[0])
	var err error
	for {
		b := *buf
		if len(b) == cap(b) {
			if buf, err = h.growBody(ctx, ch, buf, nextSize(cap(b), ch.declared, limit)); err != nil {
				return buf, err
			}
			b = *buf
		}
		n, err := body.Read(b[len(b):cap(b)])
		*buf = b[:len(b)+n]
		if n > 0 {
			ch.progress(time.Now(), n)
		}
		switch {
		case len(*buf) > limit:
			return buf, errTooLarge
		case err == io.EOF:
			if err := ch.grow(ctx, int64(cap(*buf))); err != nil {
				return buf, busy(err)
			}
			return buf, nil
		case err != nil && ch.evicted.Load():
			return buf, errEvicted
		case err != nil:
			return buf, readErr(err)
		}
	}
}

// nextSize is the capacity a full buffer of capacity n grows to: twice n,
// at most limit+1; above maxPooledBuffer, what the rest of a body of
// declared bytes needs when that is less (the byte past it detects a body
// longer than declared). Smaller buffers keep their pools' sizes.
func nextSize(n int, declared int64, limit int) int {
	next := 2 * n
	if next > maxPooledBuffer && declared+1 < int64(next) {
		next = int(declared) + 1
	}
	return min(next, limit+1)
}

// growBody charges n bytes for ch and moves old's bytes into a buffer of
// capacity n; old goes back to the pool.
func (h *ConvertHandler) growBody(ctx context.Context, ch *charge, old *[]byte, n int) (*[]byte, error) {
	if err := ch.grow(ctx, int64(n)); err != nil {
		return old, busy(err)
	}
	nb := h.bodies.get(n)
	if old != nil {
		*nb = append(*nb, *old...)
		h.bodies.put(old)
	}
	return nb, nil
}

// busy is errBusy, or errPreempted, for a charge that could not grow.
func busy(err error) error {
	if errors.Is(err, errPreempted) {
		return err
	}
	return errBusy
}

func readErr(err error) error {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return errTooLarge
	}
	return err
}
