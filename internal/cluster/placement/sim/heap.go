package sim

// Sandboxes are packed one uint64 each: the end time in virtual ns
// shifted left by 8, and the template index in the low 8 bits, so that
// ordering by the packed value is ordering by end time.
const tmplBits = 8

func pack(end int64, tmpl int) uint64 { return uint64(end)<<tmplBits | uint64(tmpl) }
func endOf(v uint64) int64            { return int64(v >> tmplBits) }
func tmplOf(v uint64) int             { return int(v & (1<<tmplBits - 1)) }

// endHeap is a 4-ary min-heap of packed sandboxes: hand-written because
// container/heap's interface calls would cost more than the rest of a
// create, and 4-ary because at 16,384 sandboxes a node's heap is out of
// cache, and half the depth is half the misses (the four children share
// a cache line).
type endHeap []uint64

const arity = 4

func (h *endHeap) push(v uint64) {
	s := append(*h, v)
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / arity
		if s[parent] <= v {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = v
	*h = s
}

// pop removes and returns the smallest; the heap must not be empty.
func (h *endHeap) pop() uint64 {
	s := *h
	top := s[0]
	last := s[len(s)-1]
	s = s[:len(s)-1]
	if len(s) > 0 {
		siftDown(s, 0, last)
	}
	*h = s
	return top
}

// siftDown places v at i or below, keeping the heap order.
func siftDown(s []uint64, i int, v uint64) {
	n := len(s)
	for {
		first := arity*i + 1
		if first >= n {
			break
		}
		c := first
		for k := first + 1; k < min(first+arity, n); k++ {
			if s[k] < s[c] {
				c = k
			}
		}
		if v <= s[c] {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = v
}

// heapify orders s as a heap in place.
func heapify(s []uint64) {
	for i := (len(s) - 2) / arity; i >= 0; i-- {
		siftDown(s, i, s[i])
	}
}

// Event kinds. Arrivals are not events: there is always exactly one
// next arrival, kept apart.
const (
	evBeat    uint8 = iota // a node's heartbeat
	evSweep                // the sweeper's pass
	evSample               // a fill sample
	evFail                 // the next node failure in the fleet
	evRecover              // a failed node comes back
)

type event struct {
	at   int64 // virtual ns since the level began
	seq  uint64
	kind uint8
	node int32
}

// before orders events by time, then by scheduling order, so that ties
// resolve the same way every run.
func (e event) before(o event) bool {
	return e.at < o.at || e.at == o.at && e.seq < o.seq
}

// events is a min-heap of events.
type events struct {
	h   []event
	seq uint64 // events scheduled so far
}

func (q *events) add(at int64, kind uint8, node int) {
	q.seq++
	e := event{at: at, seq: q.seq, kind: kind, node: int32(node)}
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !e.before(q.h[parent]) {
			break
		}
		q.h[i] = q.h[parent]
		i = parent
	}
	q.h[i] = e
}

func (q *events) next() (event, bool) {
	if len(q.h) == 0 {
		return event{}, false
	}
	return q.h[0], true
}

func (q *events) pop() event {
	top := q.h[0]
	last := q.h[len(q.h)-1]
	q.h = q.h[:len(q.h)-1]
	n := len(q.h)
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && q.h[r].before(q.h[c]) {
			c = r
		}
		if !q.h[c].before(last) {
			break
		}
		q.h[i] = q.h[c]
		i = c
	}
	q.h[i] = last
	return top
}
