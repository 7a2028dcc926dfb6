package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// Failover: a primary with a streaming standby, the primary killed as a
// host dies, the standby promoted, the old primary rebuilt as the new
// primary's standby. Replication is synchronous once the standby streams
// (RequireSync), so a commit the primary acknowledged is on the standby
// when the primary dies: what a failover without data loss needs.

// standbyPort is the port of a server made by NewStandby.
const standbyPort = defaultPort + 1

// NewStandby makes a streaming standby of s (pg_basebackup -R from it) in
// a directory of its own, listening on its own port, starts it and waits
// until s streams to it. It is removed when the test ends.
func (s *Server) NewStandby(t testing.TB) *Server {
	t.Helper()
	st, err := newServer(standbyPort)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(st.Close)
	if err := st.Rebuild(s); err != nil {
		t.Fatalf("clustertest: standby: %v", err)
	}
	return st
}

// Rebuild makes s, stopped or killed, a streaming standby of primary
// again: its data directory is replaced by a base backup of primary,
// then it starts, and Rebuild waits until primary streams to it.
func (s *Server) Rebuild(primary *Server) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.RemoveAll(s.dataDir()); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	// A killed server leaves its socket and lock file behind.
	socks, _ := filepath.Glob(filepath.Join(s.dir, ".s.PGSQL.*"))
	for _, f := range socks {
		_ = os.Remove(f)
	}
	// -X fetch: the WAL the backup needs comes at its end, over the same
	// connection; faster here than a second one streaming it, and
	// wal_keep_size (Start) keeps it on the primary meanwhile.
	if err := s.run("pg_basebackup", "-D", s.dataDir(), "-h", primary.dir, "-p", strconv.Itoa(primary.port),
		"-U", "postgres", "-R", "-X", "fetch", "-c", "fast", "--no-sync"); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	// The copied configuration is the primary's: this server's socket,
	// and no synchronous standby of its own once promoted (it would wait
	// for one forever).
	if err := s.appendConf(s.ownConf() + "synchronous_standby_names = ''\n"); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.dataDir(), "-l", filepath.Join(s.dir, "log")); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	return primary.waitStreaming()
}

// waitStreaming waits, up to a minute, until a standby streams from s.
func (s *Server) waitStreaming() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		n, err := s.count(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
		if err == nil && n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no standby streams from %s after a minute (last error: %v)", s.dir, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Server) count(ctx context.Context, q string) (int, error) {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, q).Scan(&n)
	return n, err
}

// RequireSync makes s, a primary with a streaming standby, acknowledge a
// commit only once the standby has it.
func (s *Server) RequireSync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.appendConf("synchronous_commit = remote_write\nsynchronous_standby_names = '*'\n"); err != nil {
		return fmt.Errorf("require sync: %w", err)
	}
	if err := s.run("pg_ctl", "reload", "-D", s.dataDir()); err != nil {
		return fmt.Errorf("require sync: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		n, err := s.count(ctx, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")
		if err == nil && n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("require sync: the standby is not synchronous after a minute (%v)", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Kill kills the server as its host's death would: the postmaster is
// frozen, then it and every process it started get SIGKILL; Kill returns
// once they are gone. No shutdown checkpoint, sessions reset.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	lines := strings.Split(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return fmt.Errorf("kill: postmaster.pid: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil { // forks no more
		return fmt.Errorf("kill: %w", err)
	}
	pids := append(children(pid), pid)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range pids {
		for alive(p) {
			if time.Now().After(deadline) {
				return fmt.Errorf("kill: process %d still alive after 30 s", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	removeShm(lines)
	return nil
}

// removeShm removes the small System V segment a killed postmaster
// leaves (its id is the second field of postmaster.pid's seventh line),
// which no later server of this directory would reuse: the data
// directory is replaced. Only a segment nothing is attached to.
func removeShm(pidFile []string) {
	if len(pidFile) < 7 {
		return
	}
	f := strings.Fields(pidFile[6])
	if len(f) != 2 {
		return
	}
	id, err := strconv.Atoi(f[1])
	if err != nil {
		return
	}
	var ds unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &ds); err != nil || ds.Nattch != 0 {
		return
	}
	_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
}

// children are the pids whose parent is pid.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procStat(p); ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// procStat is a process's parent and state letter (0, 0 when gone).
func procStat(pid int) (ppid int, state byte) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 2 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0][0]
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	_, st := procStat(pid)
	return st != 0 && st != 'Z' && st != 'X'
}

// Promote makes s, a standby, the primary and waits until it is.
func (s *Server) Promote() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.run("pg_ctl", "promote", "-w", "-t", "60", "-D", s.dataDir()); err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	return nil
}

// MultiHostDSN is the DSN of database db on whichever of servers accepts
// writes (target_session_attrs=read-write): a client reconnecting after a
// failover finds the promoted one.
func MultiHostDSN(db string, servers ...*Server) string {
	hosts := make([]string, len(servers))
	ports := make([]string, len(servers))
	for i, s := range servers {
		hosts[i], ports[i] = s.dir, strconv.Itoa(s.port)
	}
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=%s sslmode=disable target_session_attrs=read-write",
		strings.Join(hosts, ","), strings.Join(ports, ","), db)
}

var errNoPrimary = errors.New("no server accepts writes")

// Primary is which of servers accepts writes now.
func Primary(servers ...*Server) (*Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		if n, err := s.count(ctx, "SELECT CASE WHEN pg_is_in_recovery() THEN 0 ELSE 1 END"); err == nil && n == 1 {
			return s, nil
		}
	}
	return nil, errNoPrimary
}
