package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEndHeapOrdersByEndTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var h endHeap
	var want []uint64
	for i := range 5000 {
		v := pack(rng.Int64N(1<<40), i%256)
		want = append(want, v)
		h.push(v)
		if i%3 == 0 { // interleave pops with pushes
			slices.Sort(want)
			if got := h.pop(); got != want[0] {
				t.Fatalf("pop %d = %d, want %d", i, got, want[0])
			}
			want = want[1:]
		}
	}
	// heapify builds the same order from a plain slice.
	h2 := endHeap(slices.Clone(want))
	heapify(h2)
	slices.Sort(want)
	for i, w := range want {
		a, b := h.pop(), h2.pop()
		if a != w || b != w {
			t.Fatalf("element %d: push-built %d, heapified %d, want %d", i, a, b, w)
		}
		if endOf(a) != endOf(w) || tmplOf(a) != tmplOf(w) {
			t.Fatal("pack does not round-trip")
		}
	}
	if len(h) != 0 || len(h2) != 0 {
		t.Fatal("heaps not empty")
	}
}

func TestEventsOrderByTimeThenScheduling(t *testing.T) {
	var q events
	q.add(30, evBeat, 1)
	q.add(10, evSweep, 0)
	q.add(30, evBeat, 2)
	q.add(20, evSample, 0)
	q.add(10, evFail, 0)
	var got []event
	for len(q.h) > 0 {
		got = append(got, q.pop())
	}
	want := []struct {
		at   int64
		kind uint8
		node int32
	}{{10, evSweep, 0}, {10, evFail, 0}, {20, evSample, 0}, {30, evBeat, 1}, {30, evBeat, 2}}
	for i, w := range want {
		if got[i].at != w.at || got[i].kind != w.kind || got[i].node != w.node {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], w)
		}
	}
}
