package api

import (
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/wire"
)

// Conversions between the wire types and the types of the packages
// behind the API. Each copies field by field and keeps nil as nil, so the
// JSON is what the inner types used to produce.

// AuditRecordFromStore converts a stored record to its JSON shape (the CLI
// uses it too, so `airlock audit ls --json` prints what the API returns).
func AuditRecordFromStore(r store.AuditRecord) wire.AuditRecord {
	return wire.AuditRecord{
		Seq: r.Seq, Time: r.Time, Tenant: r.Tenant, SandboxID: r.SandboxID, ParentID: r.ParentID,
		Template: r.Template, Event: r.Event, Metadata: r.Metadata, ExitCode: r.ExitCode,
		Bytes: r.Bytes, DurationMS: r.DurationMS, Outcome: r.Outcome, Detail: r.Detail,
		PrevHash: r.PrevHash, Hash: r.Hash,
	}
}

// auditRecordForTenant is AuditRecordFromStore as a tenant sees it: seq is
// the record's number among that tenant's records, never the global one
// (which would tell one tenant how much the others did).
func auditRecordForTenant(r store.AuditRecord) wire.AuditRecord {
	out := AuditRecordFromStore(r)
	out.Seq = r.TenantSeq
	return out
}

// sandboxFromInfo converts the manager's view of a sandbox to its JSON
// shape.
func sandboxFromInfo(in sandbox.Info) wire.Sandbox {
	out := wire.Sandbox{ID: in.ID, Tenant: in.Tenant, Template: in.Template, ParentID: in.ParentID,
		Metadata: in.Metadata, State: in.State, CreatedAt: in.CreatedAt, Deadline: in.Deadline,
		EndedAt: in.EndedAt, Egress: egressPolicyFrom(in.Egress), NetAddr: in.NetAddr, Jailed: in.Jailed, Node: in.Node}
	if u := in.Usage; u != nil {
		out.Usage = &wire.Usage{CPUSeconds: u.CPUSeconds, MemoryPSSBytes: u.MemoryPSSBytes, MemoryRSSBytes: u.MemoryRSSBytes,
			MemoryPrivateBytes: u.MemoryPrivateBytes, MeasuredAt: u.MeasuredAt}
	}
	return out
}

func sandboxesFromInfos(infos []sandbox.Info) []wire.Sandbox {
	out := make([]wire.Sandbox, 0, len(infos))
	for _, in := range infos {
		out = append(out, sandboxFromInfo(in))
	}
	return out
}

// egressPolicyFrom converts a network policy to its JSON shape.
func egressPolicyFrom(p netpool.Policy) wire.EgressPolicy {
	out := wire.EgressPolicy{Default: p.Default, TLS: p.TLS}
	if p.Allow != nil {
		out.Allow = make([]wire.EgressRule, len(p.Allow))
		for i, r := range p.Allow {
			out.Allow[i] = wire.EgressRule{Name: r.Name, CIDR: r.CIDR, Ports: r.Ports, Protocol: r.Protocol, Domain: r.Domain, Credential: r.Credential}
		}
	}
	return out
}

// policyFromWire converts a policy from its JSON shape; it is not validated.
func policyFromWire(p wire.EgressPolicy) netpool.Policy {
	out := netpool.Policy{Default: p.Default, TLS: p.TLS}
	if p.Allow != nil {
		out.Allow = make([]netpool.Rule, len(p.Allow))
		for i, r := range p.Allow {
			out.Allow[i] = netpool.Rule{Name: r.Name, CIDR: r.CIDR, Ports: r.Ports, Protocol: r.Protocol, Domain: r.Domain, Credential: r.Credential}
		}
	}
	return out
}

func probeResultsFrom(rs []sandbox.ProbeResult) []wire.ProbeResult {
	out := make([]wire.ProbeResult, 0, len(rs))
	for _, r := range rs {
		out = append(out, wire.ProbeResult{Name: r.Name, Target: r.Target, Reachable: r.Reachable, Detail: r.Detail})
	}
	return out
}

func templatesFrom(ts []sandbox.TemplateInfo) []wire.TemplateInfo {
	out := make([]wire.TemplateInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, templateFrom(t))
	}
	return out
}

func templateFrom(t sandbox.TemplateInfo) wire.TemplateInfo {
	return wire.TemplateInfo{Name: t.Name, Hash: t.Hash, MemoryMiB: t.MemoryMiB, VCPUs: t.VCPUs,
		DefaultTTLSeconds: t.DefaultTTLSeconds, BuiltAt: t.BuiltAt}
}

func fileInfoFrom(fi sandbox.FileInfo) wire.FileInfo {
	return wire.FileInfo{Path: fi.Path, Name: fi.Name, Size: fi.Size, Mode: uint32(fi.Mode),
		ModeString: fi.Mode.String(), IsDir: fi.IsDir, ModTime: fi.ModTime, SymlinkTarget: fi.SymlinkTarget}
}

// KeyFromStore converts a key record to its JSON shape; current names the
// key the caller used ("" for none).
func KeyFromStore(k store.Key, current string) wire.Key {
	return wire.Key{ID: k.ID, Tenant: k.Tenant, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
		RevokedAt: k.RevokedAt, Current: current != "" && k.ID == current}
}

func processFrom(p sandbox.ProcessInfo) wire.Process {
	return wire.Process{ID: p.ID, SandboxID: p.SandboxID, Cmd: p.Shell, Argv: p.Argv, Cwd: p.Cwd,
		TimeoutSeconds: p.Timeout.Seconds(), State: p.State, ExitCode: p.ExitCode, Signal: p.Signal,
		TimedOut: p.TimedOut, Error: p.Error, StdoutBytes: p.StdoutBytes, StderrBytes: p.StderrBytes,
		StdoutTruncated: p.StdoutTruncated, StderrTruncated: p.StderrTruncated,
		StartedAt: p.StartedAt, EndedAt: p.EndedAt, User: p.User, Pty: windowSizeFrom(p.Pty), StdinOpen: p.StdinOpen}
}

func windowSizeFrom(ws *guest.WindowSize) *wire.WindowSize {
	if ws == nil {
		return nil
	}
	return &wire.WindowSize{Rows: ws.Rows, Cols: ws.Cols}
}
