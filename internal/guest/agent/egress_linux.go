//go:build linux

package agent

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// maxEgressTargets bounds one check; the host sends about five.
const maxEgressTargets = 32

// maxEgressTimeout bounds each attempt, whatever the host asks.
const maxEgressTimeout = 30 * time.Second

// EgressCheck implements agentpb.AgentServer: every target is tried at
// once from the guest's own network stack (the same routes, resolver
// configuration and packet path as any program a job runs), and each
// attempt is reported as it ended. Judging is the host's job.
func (s *Server) EgressCheck(ctx context.Context, req *agentpb.EgressCheckRequest) (*agentpb.EgressCheckResponse, error) {
	if len(req.Targets) == 0 || len(req.Targets) > maxEgressTargets {
		return nil, status.Errorf(codes.InvalidArgument, "egress check needs 1 to %d targets, got %d", maxEgressTargets, len(req.Targets))
	}
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if timeout <= 0 || timeout > maxEgressTimeout {
		return nil, status.Errorf(codes.InvalidArgument, "egress check timeout must be in (0, %s]", maxEgressTimeout)
	}
	for i, t := range req.Targets {
		if t.GetTcp() == "" && t.GetDns() == "" {
			return nil, status.Errorf(codes.InvalidArgument, "egress target %d names neither tcp nor dns", i)
		}
	}
	out := make([]*agentpb.EgressResult, len(req.Targets))
	var wg sync.WaitGroup
	for i, t := range req.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			began := time.Now()
			var r *agentpb.EgressResult
			if addr := t.GetTcp(); addr != "" {
				r = tryTCP(actx, addr)
			} else {
				r = tryDNS(actx, t.GetDns())
			}
			r.DurationMs = time.Since(began).Milliseconds()
			out[i] = r
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err // the host gave up: the outcomes are only timeouts of ours
	}
	return &agentpb.EgressCheckResponse{Results: out}, nil
}

// tryTCP connects to addr and closes at once.
func tryTCP(ctx context.Context, addr string) *agentpb.EgressResult {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		c.Close()
		return &agentpb.EgressResult{Outcome: agentpb.EgressOutcome_EGRESS_CONNECTED}
	}
	r := &agentpb.EgressResult{Detail: shortErr(err)}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		r.Outcome = agentpb.EgressOutcome_EGRESS_REFUSED
	case errors.Is(err, syscall.EHOSTUNREACH):
		// An ICMP host unreachable: something beyond the guest answered.
		// (The gateway has a permanent neighbour entry, so this is never a
		// local ARP failure.)
		r.Outcome = agentpb.EgressOutcome_EGRESS_UNREACHABLE
	case isTimeout(err):
		r.Outcome = agentpb.EgressOutcome_EGRESS_TIMEOUT
	default:
		// ENETUNREACH (no route), EPERM/EACCES (a guest-local filter),
		// ...: nothing left the guest.
		r.Outcome = agentpb.EgressOutcome_EGRESS_LOCAL_ERROR
	}
	return r
}

// tryDNS resolves name the way a guest program would (the pure-Go
// resolver reads the same resolv.conf, hosts and nsswitch files).
func tryDNS(ctx context.Context, name string) *agentpb.EgressResult {
	r := &net.Resolver{PreferGo: true}
	addrs, err := r.LookupHost(ctx, name)
	if err == nil && len(addrs) > 0 {
		return &agentpb.EgressResult{Outcome: agentpb.EgressOutcome_EGRESS_RESOLVED, Detail: "answered with addresses"}
	}
	res := &agentpb.EgressResult{Detail: shortErr(err)}
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		res.Outcome = agentpb.EgressOutcome_EGRESS_NAME_NOT_FOUND
	case isTimeout(err):
		res.Outcome = agentpb.EgressOutcome_EGRESS_TIMEOUT
	default:
		res.Outcome = agentpb.EgressOutcome_EGRESS_LOCAL_ERROR
	}
	return res
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// shortErr keeps the host's record small.
func shortErr(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
