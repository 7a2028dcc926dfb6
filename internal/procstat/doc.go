// Package procstat reads what a host process has used from /proc: CPU time
// (utime + stime of every thread, from /proc/PID/stat) and memory (PSS, RSS
// and private bytes, from /proc/PID/smaps_rollup). The sandbox manager uses
// it for the per-sandbox figures of `sandbox get` and /metrics, and the
// benchmark for idle memory; a sandbox's VMM is one process (the jail execs
// QEMU in place), so its figures are the sandbox's cost on the host.
package procstat
