package placement

import (
	"context"
	"errors"
	"slices"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Attempt is one call Place asks the caller to make.
type Attempt struct {
	Node string // the node to call
	// N numbers the sandbox: it stays the same across refusals and rises
	// after a hard failure. The caller uses one sandbox id per N.
	N int
	// Call numbers the calls of this Place, from 1.
	Call int
}

// Dispatch makes the create on a.Node. A ResourceExhausted error means the
// node refused before making anything; any other error means it may have
// made something. It should return when ctx ends.
type Dispatch func(ctx context.Context, a Attempt) error

// Result is a successful placement.
type Result struct {
	Node    string // the node that took the create
	N       int    // the sandbox number (Attempt.N) it took
	Calls   int    // calls made, refusals and failures included
	Refused int    // calls answered with a refusal
}

// NodeCall is one call Place made that did not succeed, for logs.
type NodeCall struct {
	Node string
	N    int
	Code string // the errdefs code the call ended with
}

// placeState is one Place's progress.
type placeState struct {
	excluded []string // nodes that refused or failed this request
	calls    []NodeCall
	made     int // calls made, the one the context cut included
	refused  int
	hard     int
	// The last hard failure is kept apart, in Place: an error escapes into
	// the *Error, and with it whatever it sits beside, which would put
	// the arrays behind excluded and calls on the heap for every create.
}

// Place chooses a node for req and calls dispatch on it, then on other
// nodes after refusals and failures, as the package documentation says.
// It returns the node that took the create, or an *Error.
func (p *Placer) Place(ctx context.Context, req Request, dispatch Dispatch) (Result, error) {
	if err := req.validate(); err != nil {
		return Result{}, err
	}
	var excl [4]string
	var calls [4]NodeCall
	st := placeState{excluded: excl[:0], calls: calls[:0]}
	var last error
	for call := 1; ; call++ {
		if ctx.Err() != nil {
			return Result{}, p.timeout(&req, &st, ctx.Err(), last)
		}
		tok, ok := p.reserve(&req, st.excluded)
		if !ok {
			return Result{}, p.noCandidate(&req, &st, last)
		}
		a := Attempt{Node: tok.node, N: st.hard + 1, Call: call}
		err := dispatch(ctx, a)
		st.made++
		p.finish(tok, err, ctx.Err() == nil)
		if err == nil {
			return Result{Node: a.Node, N: a.N, Calls: call, Refused: st.refused}, nil
		}
		if ctx.Err() != nil {
			return Result{}, p.timeout(&req, &st, ctx.Err(), last)
		}
		st.excluded = append(st.excluded, a.Node)
		st.calls = append(st.calls, NodeCall{Node: a.Node, N: a.N, Code: errdefs.Code(err)})
		if errdefs.Class(err) == errdefs.ErrResourceExhausted {
			if st.refused++; st.refused > p.cfg.MaxRefusals {
				return Result{}, p.exhausted(&req, &st)
			}
			continue
		}
		st.hard++
		last = err
		if st.hard >= p.cfg.MaxAttempts {
			return Result{}, p.hardFailure(&req, &st, last)
		}
	}
}

// token is a create counted in flight on a node.
type token struct {
	node string
	pos  int    // the node's position when reserved (the view may change)
	call uint64 // the inflight entry's call
}

// reserve chooses a node and counts the create in flight on it; false if
// no node passed the filter.
func (p *Placer) reserve(req *Request, excluded []string) (token, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.ids.wantOf(req)
	pos := p.choose(&w, excluded, p.clk.Now().UnixNano())
	if pos < 0 {
		return token{}, false
	}
	p.nextCall++
	nd := &p.nodes[pos]
	nd.inflight = append(nd.inflight, inflight{call: p.nextCall, build: w.build, mem: req.MemMiB, vcpus: req.VCPUs})
	nd.inSlots++
	nd.inMem += req.MemMiB
	nd.inVCPUs += req.VCPUs
	if w.build >= 0 {
		nd.builds = grow(nd.builds, w.build)
		nd.builds[w.build].inflight++
	}
	return token{node: nd.view.ID, pos: pos, call: p.nextCall}, true
}

// ErrNoAnswer marks a Dispatch error as the node's silence (no connection,
// no answer in time) rather than its answer. Only such failures, while the
// request's own context is alive, keep the node out of this replica's
// choices for Config.UnreachableFor: a node that answers "unavailable"
// (its lease unconfirmed during a database outage, say) is reachable, and
// benching it for 30 s would outlast the outage that made it answer so.
var ErrNoAnswer = errors.New("node did not answer")

// finish settles the in-flight create t: kept, as done now, on success;
// dropped otherwise. A failure to reach the node (ErrNoAnswer, when the
// request's own context did not end) marks it unreachable.
func (p *Placer) finish(t token, err error, ctxAlive bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := t.pos
	if i >= len(p.nodes) || p.nodes[i].view.ID != t.node {
		var ok bool
		if i, ok = p.index[t.node]; !ok {
			return // the node left the view meanwhile
		}
	}
	nd := &p.nodes[i]
	now := p.clk.Now().UnixNano()
	for k := range nd.inflight {
		if nd.inflight[k].call != t.call {
			continue
		}
		if err == nil {
			nd.inflight[k].doneNs = now
		} else {
			nd.inflight = slices.Delete(nd.inflight, k, k+1)
			nd.sumInflight()
		}
		break
	}
	if ctxAlive && errors.Is(err, ErrNoAnswer) {
		nd.downTill = now + int64(p.cfg.UnreachableFor)
	}
}
