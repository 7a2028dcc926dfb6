package store

// Audit event names: the Event of every record airlock writes. They are
// part of the audit log's contract (operators filter and alert on them,
// and the hash chain covers them), so a name is never reused for
// something else and never renamed: records already written keep the name
// they were hashed with.
const (
	EventCreate       = "create"        // a sandbox created, by restore or as a fork child
	EventExec         = "exec"          // a command run in a sandbox
	EventFileWrite    = "file_write"    // a file written into a sandbox
	EventFileRead     = "file_read"     // a file read out of a sandbox
	EventFileRemove   = "file_remove"   // a path removed in a sandbox
	EventArchiveWrite = "archive_write" // a tar stream unpacked into a sandbox directory
	EventArchiveRead  = "archive_read"  // a sandbox directory or file read out as a tar stream
	EventFork         = "fork"          // a sandbox forked (the parent's record)
	EventKill         = "kill"          // a sandbox killed by its tenant or at shutdown
	EventExpire       = "expire"        // a sandbox ended at its deadline
	EventFail         = "fail"          // a sandbox ended because something failed
	EventEgressChange = "egress_change" // a sandbox's egress policy replaced
	EventEgressProbe  = "egress_probe"  // the egress self-check run on demand
	EventTTLChange    = "ttl_change"    // a running sandbox's deadline moved
	// EventProcessStart is a background process started in a sandbox
	// (detail: its process id); EventProcessEnd is how it ended (exit
	// code, bytes, duration; detail: process id, state, signal). Like
	// exec, neither names the command or holds its output.
	EventProcessStart = "process_start"
	EventProcessEnd   = "process_end"
	// EventProcessStdin is bytes written to a background process's stdin
	// (detail: its process id, and closed=true when stdin was closed);
	// it counts the bytes and never holds them.
	EventProcessStdin = "process_stdin"
	// EventPause is a running sandbox saved to disk with its VMM ended
	// (detail: the bytes of memory saved); EventResume is it restored
	// from there under the same id (detail: how long it was paused).
	EventPause  = "pause"
	EventResume = "resume"
	// EventEgress is one connection through the egress proxy, recorded
	// when it closes (its rule, byte counts and status).
	EventEgress    = "egress"
	EventKeyCreate = "key_create" // an API key created (operator event)
	EventKeyRevoke = "key_revoke" // an API key revoked (operator event)
)
