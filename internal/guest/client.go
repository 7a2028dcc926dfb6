package guest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// ChunkSize is the size of file and stdin chunks sent to the agent. Large
// enough to amortise per-message cost on a slow emulated serial port, small
// enough that gRPC flow control bounds what either side buffers.
const ChunkSize = 256 << 10

// maxMsg bounds a single gRPC message in either direction.
const maxMsg = 4 << 20

// Client talks to one VM's agent. It is safe for concurrent use; gRPC
// multiplexes calls over the single serial stream.
type Client struct {
	conn *grpc.ClientConn // immutable after Dial
	rpc  agentpb.AgentClient

	mu    sync.Mutex
	first net.Conn // guarded by mu; the pre-opened connection until the first dial takes it
}

// DialOptions shape how a Client makes its connections.
type DialOptions struct {
	// First, if not nil, is used for the first connection: a restore
	// connects the socket before the guest runs, so the port's saved "host
	// connected" state matches.
	First net.Conn
	// Adopting says the agent may still be inside an earlier host's gRPC
	// session (a restarted daemon taking over a running VM), so even the
	// first sync must be ready to end that session (SyncOptions.ResetStale).
	// Redials always are: whoever dropped the last connection, the agent
	// may not have noticed yet.
	Adopting bool
}

// Dial prepares a client for the agent behind the unix socket QEMU serves
// at socketPath. The connection (with its sync handshake) is made by the
// first call; use Ready to wait for it. A dropped connection is redialled,
// with a new sync, on the next call.
func Dial(ctx context.Context, socketPath string, opts DialOptions) (*Client, error) {
	cl := &Client{first: opts.First}
	dials := 0 // guarded by cl.mu
	dialer := func(ctx context.Context, _ string) (net.Conn, error) {
		cl.mu.Lock()
		c := cl.first
		cl.first = nil
		dials++
		resetStale := opts.Adopting || dials > 1
		cl.mu.Unlock()
		if c == nil {
			var d net.Dialer
			var err error
			if c, err = d.DialContext(ctx, "unix", socketPath); err != nil {
				return nil, err
			}
		}
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(time.Minute)
		}
		if err := HostSync(c, deadline, SyncOptions{ResetStale: resetStale}); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	conn, err := grpc.NewClient("passthrough:///agent",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dialer),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)),
		// No name resolution happens: the target is one socket.
		grpc.WithDisableServiceConfig(),
	)
	if err != nil {
		return nil, fmt.Errorf("agent client for %s: %w", socketPath, err)
	}
	cl.conn, cl.rpc = conn, agentpb.NewAgentClient(conn)
	return cl, nil
}

// Ready waits until the agent answers (or ctx ends): the first call after
// a cold boot, when the agent may not be up yet.
func (c *Client) Ready(ctx context.Context) error {
	if _, err := c.rpc.Health(ctx, &agentpb.HealthRequest{}, grpc.WaitForReady(true)); err != nil {
		return fmt.Errorf("agent did not answer: %w", mapErr(ctx, "health", err))
	}
	return nil
}

// Close drops the connection. The agent notices the port closing and waits
// for the next host.
func (c *Client) Close() error {
	// gRPC dials lazily: a client closed before its first call would
	// otherwise leave the pre-opened connection (and the port) held open.
	c.mu.Lock()
	if c.first != nil {
		c.first.Close()
		c.first = nil
	}
	c.mu.Unlock()
	return c.conn.Close()
}

// Health returns the guest's identity and liveness.
func (c *Client) Health(ctx context.Context) (*agentpb.HealthResponse, error) {
	r, err := c.rpc.Health(ctx, &agentpb.HealthRequest{})
	return r, mapErr(ctx, "health", err)
}

// Prepare pushes clock, entropy and identity into the guest. It waits for
// the connection, so it can be the first call after a restore.
func (c *Client) Prepare(ctx context.Context, req *agentpb.PrepareRequest) (*agentpb.PrepareResponse, error) {
	r, err := c.rpc.Prepare(ctx, req, grpc.WaitForReady(true))
	return r, mapErr(ctx, "prepare", err)
}

// ExecOptions describes one process to run in the guest.
type ExecOptions struct {
	Argv           []string      // exactly one of Argv and Shell
	Shell          string        // run with /bin/sh -c
	Env            []string      // KEY=VALUE
	Cwd            string        // absolute guest path; "" = /
	Timeout        time.Duration // 0 = none; the whole process tree is killed on expiry
	MaxOutputBytes int64         // per stream; 0 = agent default
	Stdin          io.Reader     // nil = /dev/null
	// Signals, when set, keeps the call's request side open after stdin
	// and delivers each signal received on it to the whole process tree
	// (the agent signals its process group; SIGKILL also its cgroup). A
	// send must not block: the channel is read only while the call runs.
	Signals <-chan syscall.Signal
	// User runs the process as this guest user (a name in the guest's
	// /etc/passwd, or a uid), unable to become root again; "" = root. An
	// unknown user fails the call with ErrInvalidArgument.
	User string
	// Pty runs the process on a terminal of this size: stdout carries
	// stdout and stderr merged (stderr stays empty), stdin is always
	// open (nil Stdin: nothing is typed) and its end is the terminal's
	// EOF character. nil: pipes.
	Pty *WindowSize
	// Resize, with Pty, keeps the call's request side open like Signals
	// and sets the terminal's size to each value received on it.
	Resize <-chan WindowSize
}

// WindowSize is a terminal's size in characters.
type WindowSize struct {
	Rows, Cols uint32
}

// ExecResult is how a process ended.
type ExecResult struct {
	ExitCode        int
	Signal          string
	TimedOut        bool
	StdoutTruncated bool
	StderrTruncated bool
	StdoutBytes     int64 // produced by the process, including dropped bytes
	StderrBytes     int64
	Duration        time.Duration
}

// hostGrace is how long past the guest-side timeout the host waits for the
// agent's answer before it gives up on the call itself. The agent enforces
// the timeout; this bound covers an agent that cannot.
const hostGrace = 15 * time.Second

// Exec runs a process and streams its output into stdout and stderr (either
// may be nil to discard). It returns when the process has exited and all
// its output has been delivered.
func (c *Client) Exec(ctx context.Context, opts ExecOptions, stdout, stderr io.Writer) (ExecResult, error) {
	if (len(opts.Argv) == 0) == (opts.Shell == "") {
		return ExecResult{}, errdefs.InvalidArgument("exec needs exactly one of argv or a shell command")
	}
	if opts.Timeout < 0 {
		return ExecResult{}, errdefs.InvalidArgument("exec timeout must not be negative")
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout+hostGrace)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.Exec(ctx)
	if err != nil {
		return ExecResult{}, mapErr(ctx, "exec", err)
	}
	start := &agentpb.ExecStart{
		Argv: opts.Argv, Shell: opts.Shell, Env: opts.Env, Cwd: opts.Cwd,
		TimeoutMs: opts.Timeout.Milliseconds(), MaxOutputBytes: opts.MaxOutputBytes,
		Stdin: opts.Stdin != nil, User: opts.User,
	}
	if opts.Pty != nil {
		start.Pty = &agentpb.WindowSize{Rows: opts.Pty.Rows, Cols: opts.Pty.Cols}
	}
	if err := stream.Send(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: start}}); err != nil {
		return ExecResult{}, mapErr(ctx, "exec", recvErr(stream, err))
	}
	switch {
	case opts.Signals != nil || opts.Resize != nil:
		go sendInput(ctx, stream, opts.Stdin, opts.Signals, opts.Resize)
	case opts.Stdin != nil:
		go func() { _ = sendStdin(stream, opts.Stdin, true) }()
	default:
		_ = stream.CloseSend()
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			if err == io.EOF {
				return ExecResult{}, errdefs.Unavailable("agent ended exec without an exit status")
			}
			return ExecResult{}, mapErr(ctx, "exec", err)
		}
		switch m := msg.Msg.(type) {
		case *agentpb.ExecResponse_Stdout:
			if stdout != nil {
				if _, err := stdout.Write(m.Stdout); err != nil {
					return ExecResult{}, fmt.Errorf("deliver stdout: %w", err)
				}
			}
		case *agentpb.ExecResponse_Stderr:
			if stderr != nil {
				if _, err := stderr.Write(m.Stderr); err != nil {
					return ExecResult{}, fmt.Errorf("deliver stderr: %w", err)
				}
			}
		case *agentpb.ExecResponse_Exit:
			e := m.Exit
			return ExecResult{
				ExitCode: int(e.ExitCode), Signal: e.Signal, TimedOut: e.TimedOut,
				StdoutTruncated: e.StdoutTruncated, StderrTruncated: e.StderrTruncated,
				StdoutBytes: e.StdoutBytes, StderrBytes: e.StderrBytes,
				Duration: time.Duration(e.DurationMs) * time.Millisecond,
			}, nil
		}
	}
}

// sendInput is the one sender of a call with Signals or Resize: stdin
// as it comes (then its close), each signal and each resize, in the order
// they arrive, until the call ends. A signal never waits for stdin: a
// process that does not read its stdin can still be killed. Send errors
// end it; the call's Recv reports why.
func sendInput(ctx context.Context, stream agentpb.Agent_ExecClient, stdin io.Reader, sigs <-chan syscall.Signal, resize <-chan WindowSize) {
	var chunks <-chan []byte
	if stdin != nil {
		chunks = readChunks(ctx, stdin)
	}
	for {
		var msg *agentpb.ExecRequest
		select {
		case <-ctx.Done():
			return
		case data, ok := <-chunks:
			if !ok {
				chunks = nil
				msg = &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_StdinClose{StdinClose: true}}
				break
			}
			msg = &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_StdinData{StdinData: data}}
		case sig := <-sigs:
			msg = &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Signal{Signal: int32(sig)}}
		case ws := <-resize:
			msg = &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Resize{Resize: &agentpb.WindowSize{Rows: ws.Rows, Cols: ws.Cols}}}
		}
		if err := stream.Send(msg); err != nil {
			return
		}
	}
}

// readChunks reads r in chunks of at most ChunkSize onto the returned
// channel, which is closed at r's end (or a read error: stdin ends
// there too). It stops when ctx ends; a reader that blocks must be
// unblocked by its owner (the sandbox closes a process's stdin pipe when
// the process ends).
func readChunks(ctx context.Context, r io.Reader) <-chan []byte {
	out := make(chan []byte)
	go func() {
		defer close(out)
		buf := make([]byte, ChunkSize)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				select {
				case out <- append([]byte(nil), buf[:n]...):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// sendStdin streams r as stdin, then closes it; closeSend also ends the
// request side (no signals can follow).
func sendStdin(stream agentpb.Agent_ExecClient, r io.Reader, closeSend bool) error {
	buf := make([]byte, ChunkSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			if serr := stream.Send(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_StdinData{StdinData: data}}); serr != nil {
				return serr
			}
		}
		if err == io.EOF {
			if serr := stream.Send(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_StdinClose{StdinClose: true}}); serr != nil {
				return serr
			}
			if !closeSend {
				return nil
			}
			return stream.CloseSend()
		}
		if err != nil {
			stream.CloseSend()
			return err
		}
	}
}

// recvErr turns a failed Send into the real error: gRPC reports io.EOF from
// Send when the server has already ended the stream with a status.
func recvErr(stream grpc.ClientStream, err error) error {
	if err != io.EOF {
		return err
	}
	var m agentpb.ExecResponse
	if rerr := stream.RecvMsg(&m); rerr != nil && rerr != io.EOF {
		return rerr
	}
	return err
}

// EgressTarget is one thing the guest tries to reach: exactly one of TCP
// ("ip:port") and DNS (a name).
type EgressTarget struct {
	TCP string
	DNS string
}

// EgressResult is how one attempt ended, as the guest saw it.
type EgressResult struct {
	Outcome  agentpb.EgressOutcome
	Detail   string
	Duration time.Duration
}

// EgressCheck has the guest try every target at once, each bounded by
// timeout, and returns one result per target in order.
func (c *Client) EgressCheck(ctx context.Context, targets []EgressTarget, timeout time.Duration) ([]EgressResult, error) {
	req := &agentpb.EgressCheckRequest{TimeoutMs: timeout.Milliseconds()}
	for _, t := range targets {
		switch {
		case t.TCP != "" && t.DNS == "":
			req.Targets = append(req.Targets, &agentpb.EgressTarget{Target: &agentpb.EgressTarget_Tcp{Tcp: t.TCP}})
		case t.DNS != "" && t.TCP == "":
			req.Targets = append(req.Targets, &agentpb.EgressTarget{Target: &agentpb.EgressTarget_Dns{Dns: t.DNS}})
		default:
			return nil, errdefs.InvalidArgument("egress target needs exactly one of tcp and dns")
		}
	}
	// The guest bounds every attempt; this covers a guest that cannot.
	ctx, cancel := context.WithTimeout(ctx, timeout+hostGrace)
	defer cancel()
	r, err := c.rpc.EgressCheck(ctx, req)
	if err != nil {
		return nil, mapErr(ctx, "egress check", err)
	}
	if len(r.Results) != len(targets) {
		return nil, errdefs.New(errdefs.ErrInternal, "agent egress check: %d results for %d targets", len(r.Results), len(targets))
	}
	out := make([]EgressResult, len(r.Results))
	for i, x := range r.Results {
		out[i] = EgressResult{Outcome: x.Outcome, Detail: x.Detail, Duration: time.Duration(x.DurationMs) * time.Millisecond}
	}
	return out, nil
}

// mapErr converts a gRPC status into airlock's error classes, naming the
// operation and keeping the agent's message. The caller's own context
// decides first: a call it cancelled or let run out is Unavailable or
// DeadlineExceeded whatever the transport made of it, never Internal.
func mapErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return errdefs.DeadlineExceeded("agent %s: deadline exceeded: %v", op, err)
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return errdefs.Unavailable("agent %s: cancelled: %v", op, err)
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("agent %s: %w", op, err)
	}
	class := classOfCode(st.Code())
	switch st.Code() {
	case codes.Canceled:
		class = errdefs.ErrUnavailable
	case codes.Unknown:
		// A handler that returned a bare context error: the session ended
		// under the call (the agent's side of it was torn down).
		if msg := st.Message(); msg == context.Canceled.Error() || msg == context.DeadlineExceeded.Error() {
			class = errdefs.ErrUnavailable
		}
	}
	return errdefs.New(class, "agent %s: %s", op, st.Message())
}
