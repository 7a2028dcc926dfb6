package apitier

import (
	"io/fs"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/wire"
)

// Conversions from the node's answers (wire types, through the Go
// client) to the types the API's handlers take from a Backend.

func infoFromWire(in wire.Sandbox, node string) sandbox.Info {
	out := sandbox.Info{ID: in.ID, Tenant: in.Tenant, Template: in.Template, ParentID: in.ParentID,
		Metadata: in.Metadata, State: in.State, CreatedAt: in.CreatedAt, Deadline: in.Deadline, EndedAt: in.EndedAt,
		Egress: policyFromWire(in.Egress), NetAddr: in.NetAddr, Jailed: in.Jailed, Node: node}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if u := in.Usage; u != nil {
		out.Usage = &sandbox.Usage{CPUSeconds: u.CPUSeconds, MemoryPSSBytes: u.MemoryPSSBytes, MemoryRSSBytes: u.MemoryRSSBytes,
			MemoryPrivateBytes: u.MemoryPrivateBytes, MeasuredAt: u.MeasuredAt}
	}
	return out
}

func policyFromWire(p wire.EgressPolicy) netpool.Policy {
	out := netpool.Policy{Default: p.Default, TLS: p.TLS}
	for _, r := range p.Allow {
		out.Allow = append(out.Allow, netpool.Rule{Name: r.Name, CIDR: r.CIDR, Ports: r.Ports, Protocol: r.Protocol, Domain: r.Domain, Credential: r.Credential})
	}
	return out
}

func policyToWire(p netpool.Policy) wire.EgressPolicy {
	out := wire.EgressPolicy{Default: p.Default, TLS: p.TLS}
	for _, r := range p.Allow {
		out.Allow = append(out.Allow, wire.EgressRule{Name: r.Name, CIDR: r.CIDR, Ports: r.Ports, Protocol: r.Protocol, Domain: r.Domain, Credential: r.Credential})
	}
	return out
}

func execRequest(o guest.ExecOptions, stdin []byte) client.ExecRequest {
	req := client.ExecRequest{Cmd: o.Shell, Argv: o.Argv, Cwd: o.Cwd, Timeout: o.Timeout, MaxOutputBytes: o.MaxOutputBytes, Stdin: stdin, User: o.User}
	if o.Pty != nil {
		req.Pty = &client.WindowSize{Rows: o.Pty.Rows, Cols: o.Pty.Cols}
	}
	if len(o.Env) > 0 {
		req.Env = map[string]string{}
		for _, kv := range o.Env {
			for i := 0; i < len(kv); i++ {
				if kv[i] == '=' {
					req.Env[kv[:i]] = kv[i+1:]
					break
				}
			}
		}
	}
	return req
}

func execResult(st client.ExecStatus) guest.ExecResult {
	return guest.ExecResult{ExitCode: st.ExitCode, Signal: st.Signal, TimedOut: st.TimedOut,
		StdoutTruncated: st.StdoutTruncated, StderrTruncated: st.StderrTruncated,
		StdoutBytes: st.StdoutBytes, StderrBytes: st.StderrBytes, Duration: time.Duration(st.DurationMS) * time.Millisecond}
}

func fileInfo(fi wire.FileInfo) sandbox.FileInfo {
	return sandbox.FileInfo{Path: fi.Path, Name: fi.Name, Size: fi.Size, Mode: fs.FileMode(fi.Mode), IsDir: fi.IsDir,
		ModTime: fi.ModTime, SymlinkTarget: fi.SymlinkTarget}
}

func processInfo(p wire.Process) sandbox.ProcessInfo {
	return sandbox.ProcessInfo{ID: p.ID, SandboxID: p.SandboxID, Argv: p.Argv, Shell: p.Cmd, Cwd: p.Cwd,
		Timeout: time.Duration(p.TimeoutSeconds * float64(time.Second)), State: p.State, ExitCode: p.ExitCode,
		Signal: p.Signal, TimedOut: p.TimedOut, Error: p.Error, StartedAt: p.StartedAt, EndedAt: p.EndedAt,
		StdoutBytes: p.StdoutBytes, StderrBytes: p.StderrBytes, StdoutTruncated: p.StdoutTruncated, StderrTruncated: p.StderrTruncated}
}
