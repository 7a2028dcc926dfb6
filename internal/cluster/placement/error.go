package placement

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Error is a create that could not be placed. Its message is for the
// tenant: it counts nodes by reason and never names one. The fields carry
// the node ids, for the operator's logs.
type Error struct {
	// Class is the errdefs class (errors.Is and errdefs.Class see it):
	// ResourceExhausted, FailedPrecondition, Unavailable,
	// DeadlineExceeded, or the last node's class after the hard attempts.
	Class     error
	Template  string
	Build     string
	HostClass string
	MemMiB    int64
	VCPUs     int
	// Considered is how many nodes the view held when placement gave up
	// for want of a candidate (0 when it gave up for another cause).
	Considered int
	// Rejected counts the Considered nodes by the reason each could not
	// take the request; nil when placement gave up for another cause.
	Rejected map[Reason]int
	// Refused is how many nodes refused (ResourceExhausted) this request.
	Refused int
	// Attempts are the calls that did not succeed, in order.
	Attempts []NodeCall
	// Missing is, for FailedPrecondition, what no node in any state has:
	// ReasonBuildNotReady, ReasonCapability or ReasonLabel.
	Missing Reason
	// Pulling is, for a missing build, how many nodes of the host class
	// are pulling it.
	Pulling int
	// Last is the last hard failure, as the node call returned it; it may
	// name the node, so only its class reaches the message (and its text
	// for classes that are about the request itself).
	Last error
	msg  string // the message, built with the error
}

func (e *Error) Error() string {
	if e.msg == "" {
		return "placement failed: " + errdefs.Code(e.Class)
	}
	return e.msg
}

// Unwrap returns the class, so that errors.Is and errdefs.Class see it.
func (e *Error) Unwrap() error { return e.Class }

func (p *Placer) newError(class error, req *Request, st *placeState, last error) *Error {
	return &Error{
		Class: class, Template: req.Template, Build: req.Build, HostClass: req.HostClass,
		MemMiB: req.MemMiB, VCPUs: req.VCPUs, Refused: st.refused,
		Attempts: slices.Clone(st.calls), Last: last,
	}
}

// noCandidate is the answer when no node passes the filter.
func (p *Placer) noCandidate(req *Request, st *placeState, last error) error {
	p.mu.Lock()
	c := p.countAll(req, st.excluded, p.clk.Now().UnixNano())
	missing, pulling := p.neverPlaceable(req)
	considered := len(p.nodes)
	p.mu.Unlock()
	full := c[rFullSlots] + c[rFullMemory] + c[rFullVCPUs]
	if missing == "" && st.hard > 0 && st.refused == 0 && full == 0 {
		return p.hardFailure(req, st, last) // the nodes that could have taken it failed
	}
	e := p.newError(errdefs.ErrResourceExhausted, req, st, last)
	e.Considered, e.Rejected = considered, c.toMap()
	if missing != "" {
		e.Class, e.Missing, e.Pulling = errdefs.ErrFailedPrecondition, missing, pulling
		e.msg = preconditionMessage(req, missing, pulling)
		return e
	}
	if transient(&c) {
		e.Class = errdefs.ErrUnavailable
	}
	e.msg = exhaustedMessage(req, considered, &c, st)
	return e
}

// transient reports whether every node was passed over only for its
// liveness, and some only for a while: leases about to end (heartbeats
// not recorded, as while the database fails over) or unreachable from
// this replica. No node is full, so the cluster is not out of resources:
// it is unavailable for now (503, retried), not exhausted (429).
func transient(c *counts) bool {
	for r, n := range c {
		switch reasonIdx(r) {
		case rNotReady, rLeaseShort, rUnreachable:
		default:
			if n > 0 {
				return false
			}
		}
	}
	return c[rLeaseShort]+c[rUnreachable] > 0
}

// exhausted is the answer after more than MaxRefusals refusals.
func (p *Placer) exhausted(req *Request, st *placeState) error {
	p.mu.Lock()
	c := p.countAll(req, st.excluded, p.clk.Now().UnixNano())
	considered := len(p.nodes)
	p.mu.Unlock()
	e := p.newError(errdefs.ErrResourceExhausted, req, st, nil)
	e.Considered, e.Rejected = considered, c.toMap()
	e.msg = exhaustedMessage(req, considered, &c, st)
	return e
}

// hardFailure is the answer after the hard attempts: Unavailable if none
// reached its node, else the last node's class.
func (p *Placer) hardFailure(req *Request, st *placeState, last error) error {
	unreachable := true
	for _, c := range st.calls {
		if c.Code != errdefs.ErrResourceExhausted.Error() && c.Code != errdefs.ErrUnavailable.Error() {
			unreachable = false
		}
	}
	if unreachable {
		e := p.newError(errdefs.ErrUnavailable, req, st, last)
		e.msg = fmt.Sprintf("%s failed: nodes unreachable", plural(st.hard, "placement attempt", "placement attempts"))
		return e
	}
	e := p.newError(errdefs.Class(last), req, st, last)
	e.msg = fmt.Sprintf("failed to create after %s: %s", plural(st.hard, "attempt", "attempts"), describe(last, st.calls))
	return e
}

// timeout is the answer when the request's context ended.
func (p *Placer) timeout(req *Request, st *placeState, ctxErr, last error) error {
	e := p.newError(errdefs.Class(ctxErr), req, st, last)
	verb := "timed out"
	if e.Class != errdefs.ErrDeadlineExceeded {
		verb = "canceled"
	}
	e.msg = fmt.Sprintf("placement %s after %s", verb, plural(st.made, "attempt", "attempts"))
	return e
}

// neverPlaceable reports what no node in any state has for req
// (ReasonBuildNotReady, ReasonCapability, ReasonLabel), or "" if some node
// could take it once it had room; with the count of nodes of the host
// class pulling the build. Called with mu held.
func (p *Placer) neverPlaceable(req *Request) (Reason, int) {
	withBuild, withCaps, pulling := 0, 0, 0
	w := p.ids.wantOf(req)
	for i := range p.nodes {
		nd := &p.nodes[i]
		if w.class != anyClass && nd.class != w.class {
			continue
		}
		b := nd.slot(w.build)
		if b.reported && !b.ready {
			pulling++
		}
		if !b.ready && !req.AllowPull {
			continue
		}
		withBuild++
		if !nd.hasCaps(&w) {
			continue
		}
		withCaps++
		if hasLabels(nd.view.Labels, req.Labels) {
			return "", 0
		}
	}
	switch {
	case withBuild == 0:
		return ReasonBuildNotReady, pulling
	case withCaps == 0:
		return ReasonCapability, 0
	}
	return ReasonLabel, 0
}

// describe is the tenant's view of a node's failure: the class, and the
// text only for classes that are about the request (a transport or
// internal error's text may hold a node's address), with every node id
// tried taken out.
func describe(err error, calls []NodeCall) string {
	switch class := errdefs.Class(err); class {
	case errdefs.ErrUnavailable:
		return "node unreachable"
	case errdefs.ErrDeadlineExceeded:
		return "node timed out"
	case errdefs.ErrInternal:
		return "node failed (internal)"
	case errdefs.ErrResourceExhausted:
		return "node out of resources"
	}
	msg := err.Error()
	for _, c := range calls {
		if c.Node != "" {
			msg = strings.ReplaceAll(msg, c.Node, "a node")
		}
	}
	return msg
}

func templateName(req *Request) string {
	if req.Template != "" {
		return req.Template
	}
	return req.Build
}

func preconditionMessage(req *Request, missing Reason, pulling int) string {
	onClass := "no node"
	if req.HostClass != "" {
		onClass = "no node of host class " + req.HostClass
	}
	switch missing {
	case ReasonCapability:
		return fmt.Sprintf("a sandbox of %s needs %s, which %s with its build offers", templateName(req), strings.Join(req.Capabilities, ", "), onClass)
	case ReasonLabel:
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(req.Labels)) {
			kv = append(kv, k+"="+req.Labels[k])
		}
		return fmt.Sprintf("a sandbox of %s asks for labels %s, which %s with its build and capabilities carries", templateName(req), strings.Join(kv, ", "), onClass)
	}
	msg := fmt.Sprintf("template %s build %s is ready on %s", templateName(req), req.Build, onClass)
	if pulling > 0 {
		msg += fmt.Sprintf(" (pulling on %d)", pulling)
	}
	return msg
}

// groups are the phrases of the counts in a ResourceExhausted message, in
// the order they are given; excluded nodes are told after a semicolon,
// as refused or failed, and the full ones as one group.
var groups = []struct {
	r      reasonIdx
	phrase string
}{
	{rNotReady, "not ready"},
	{rDraining, "draining"},
	{rLeaseShort, "with a lease about to end"},
	{rUnreachable, "unreachable"},
	{rHostClass, "of another host class"},
	{rBuildNotReady, "without the build ready"},
	{rCapability, "without a needed capability"},
	{rLabel, "without the labels"},
}

func exhaustedMessage(req *Request, considered int, c *counts, st *placeState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no node can take a sandbox of %s (%d MiB, %s) now: %s",
		templateName(req), req.MemMiB, plural(req.VCPUs, "vCPU", "vCPUs"), plural(considered, "node", "nodes"))
	for _, g := range groups {
		if n := c[g.r]; n > 0 {
			fmt.Fprintf(&b, ", %d %s", n, g.phrase)
		}
	}
	if full := c[rFullSlots] + c[rFullMemory] + c[rFullVCPUs]; full > 0 {
		fmt.Fprintf(&b, ", %d full (%s)", full, fullBreakdown(c))
	}
	var tail []string
	if st.refused > 0 {
		tail = append(tail, fmt.Sprintf("%d refused", st.refused))
	}
	if st.hard > 0 {
		tail = append(tail, fmt.Sprintf("%d failed", st.hard))
	}
	if len(tail) > 0 {
		b.WriteString("; " + strings.Join(tail, ", "))
	}
	return b.String()
}

// fullBreakdown is "memory 940, slots 42": the dimensions nodes were full
// in, most first.
func fullBreakdown(c *counts) string {
	type dim struct {
		name string
		n    int
	}
	dims := []dim{{"slots", c[rFullSlots]}, {"memory", c[rFullMemory]}, {"vCPUs", c[rFullVCPUs]}}
	slices.SortStableFunc(dims, func(a, b dim) int { return b.n - a.n })
	var parts []string
	for _, d := range dims {
		if d.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", d.name, d.n))
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
