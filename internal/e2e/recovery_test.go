package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// TestCrashRecovery kills the daemon with SIGKILL while sandboxes run and
// checks what a restarted daemon makes of them: overdue ones are expired
// and reaped, the others adopted and still usable; orphaned state is
// cleaned up without killing processes that merely look like VMs.
func TestCrashRecovery(t *testing.T) {
	e := getEnv(t)
	d := startDaemon(t, e)
	c := d.client(t, tenantA)
	tag := uniq("crash")

	// The long ones first, so the short ones are still young when the
	// daemon dies; they are created together for the same reason.
	var short, long []*client.Sandbox
	for i := 0; i < 2; i++ {
		long = append(long, createSandbox(t, c, 300, map[string]string{"crash": tag, "ttl": "long"}))
	}
	// One adopted sandbox must still die at its deadline under the new
	// daemon, and one whose QEMU dies while no daemon runs must be failed.
	medium := createSandbox(t, c, 25, map[string]string{"crash": tag, "ttl": "medium"})
	doomed := createSandbox(t, c, 300, map[string]string{"crash": tag, "ttl": "doomed"})
	for _, s := range long {
		mustExec(t, s, "echo survived-"+s.ID+" > /job/keep.txt")
	}
	short = make([]*client.Sandbox, 3)
	var wg sync.WaitGroup
	for i := range short {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sbx, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 4,
				Metadata: map[string]string{"crash": tag, "ttl": "short"}})
			if err != nil {
				t.Errorf("create short sandbox: %v", err)
				return
			}
			short[i] = sbx
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var lastShort time.Time
	for _, s := range short {
		if s.Deadline.After(lastShort) {
			lastShort = s.Deadline
		}
	}
	d.crash(t)
	crashed := time.Now()
	t.Logf("daemon killed with SIGKILL; short sandboxes due in %s", lastShort.Sub(crashed).Round(time.Millisecond))
	for _, s := range append(append([]*client.Sandbox(nil), short...), long...) {
		if ps := qemuProcs(filepath.Join(d.runDir, s.ID)); len(ps) != 1 {
			// A short one may not have been reaped yet; either way its VM
			// must outlive the daemon, not die with it.
			if time.Now().Before(s.Deadline) {
				t.Errorf("sandbox %s: %d QEMU processes right after the daemon died, want 1", s.ID, len(ps))
			}
		}
	}

	ps := qemuProcs(filepath.Join(d.runDir, doomed.ID))
	if len(ps) != 1 {
		t.Fatalf("sandbox %s: QEMU processes %v", doomed.ID, ps)
	}
	if err := syscall.Kill(ps[0].pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	// An orphan whose qemu.pid names a live process that is not its QEMU
	// (a reused pid): the directory goes, the process must not be killed.
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	sleeperDone := make(chan struct{})
	go func() { sleeper.Wait(); close(sleeperDone) }()
	t.Cleanup(func() { _ = sleeper.Process.Kill(); <-sleeperDone })
	impostor := filepath.Join(d.runDir, "sbx-orphanimpostor0000")
	if err := os.MkdirAll(impostor, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(impostor, "qemu.pid"), []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// And an orphan with nothing in it at all.
	empty := filepath.Join(d.runDir, "sbx-orphanempty00000000")
	if err := os.MkdirAll(empty, 0o700); err != nil {
		t.Fatal(err)
	}

	// Restart only once the short ones are overdue.
	if wait := time.Until(lastShort.Add(500 * time.Millisecond)); wait > 0 {
		time.Sleep(wait)
	}
	began := time.Now()
	d.start(t)
	t.Logf("restarted daemon recovered and answered in %s", time.Since(began).Round(time.Millisecond))

	for _, s := range short {
		got, err := c.GetSandbox(ctx(t), s.ID)
		if err != nil {
			t.Fatalf("get %s after restart: %v", s.ID, err)
		}
		if got.State != "expired" {
			t.Errorf("overdue sandbox %s after restart: state %s, want expired", s.ID, got.State)
		}
		d.vmGone(t, s.ID)
		recs := allAudit(t, c, client.AuditFilter{SandboxID: s.ID, Events: []string{"expire"}})
		// One that fell due before the crash may have been reaped by the
		// first daemon (slow creates); the rest must be recovery's work.
		byRecovery := s.Deadline.After(crashed)
		if len(recs) != 1 || recs[0].Outcome != "ok" || (byRecovery && recs[0].Detail["during"] != "recovery") {
			t.Errorf("expire records for %s: %+v; want one, outcome ok, during recovery", s.ID, recs)
		}
		if _, err := s.Exec(ctx(t), "true"); !errors.Is(err, client.ErrFailedPrecondition) || !strings.Contains(err.Error(), "is expired") {
			t.Errorf("exec in overdue %s after restart: %v, want failed_precondition: expired", s.ID, err)
		}
	}
	for _, s := range long {
		got, err := c.GetSandbox(ctx(t), s.ID)
		if err != nil || got.State != "running" {
			t.Fatalf("long sandbox %s after restart: %+v, %v; want running", s.ID, got, err)
		}
		if out := mustExec(t, s, "cat /job/keep.txt"); out != "survived-"+s.ID+"\n" {
			t.Errorf("adopted %s lost its files: %q", s.ID, out)
		}
		if b, err := s.Files().ReadAll(ctx(t), "/job/keep.txt"); err != nil || !strings.HasPrefix(string(b), "survived-") {
			t.Errorf("read from adopted %s: %q, %v", s.ID, b, err)
		}
	}
	running, err := c.ListSandboxes(ctx(t), map[string]string{"crash": tag})
	if err != nil || len(running) != len(long)+1 {
		t.Errorf("running after restart: %v, %v; want the %d long ones and the medium one", ids(running), err, len(long))
	}
	if got, err := c.GetSandbox(ctx(t), doomed.ID); err != nil || got.State != "failed" {
		t.Errorf("sandbox whose QEMU died while the daemon was down: %+v, %v; want failed", got, err)
	}
	if recs := allAudit(t, c, client.AuditFilter{SandboxID: doomed.ID, Events: []string{"fail"}}); len(recs) != 1 {
		t.Errorf("fail records for %s: %+v; want one", doomed.ID, recs)
	}
	d.vmGone(t, doomed.ID)

	select {
	case <-sleeperDone:
		t.Errorf("recovery killed pid %d, which was not a QEMU serving the orphan dir", sleeper.Process.Pid)
	default:
		if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("sleep process: %v", err)
		}
	}
	for _, dir := range []string{impostor, empty} {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("orphan dir %s survived recovery", dir)
		}
	}

	// The adopted medium sandbox expires at its deadline, not the daemon's
	// restart time.
	if got, err := c.GetSandbox(ctx(t), medium.ID); err != nil || got.State != "running" {
		t.Fatalf("medium sandbox after restart: %+v, %v; want running (restart too slow?)", got, err)
	}
	time.Sleep(time.Until(medium.Deadline.Add(2 * time.Second)))
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got, err := c.GetSandbox(ctx(t), medium.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != "running" {
			if got.State != "expired" || got.EndedAt == nil || got.EndedAt.Sub(medium.Deadline) > 2*time.Second {
				t.Errorf("adopted sandbox at its deadline: state %s, ended %v, deadline %v", got.State, got.EndedAt, medium.Deadline)
			}
			break
		}
		if time.Now().After(end) {
			t.Errorf("adopted sandbox %s still running %s after its deadline", medium.ID, time.Since(medium.Deadline).Round(time.Millisecond))
			break
		}
	}
	d.vmGone(t, medium.ID)

	// The audit chain survived the SIGKILL intact.
	if out, stderr, code := e.cli(t, "audit", "verify", "--state-dir", e.stateDir); code != 0 {
		t.Errorf("airlock audit verify after crash and recovery: exit %d\n%s%s", code, out, stderr)
	}

	// An adopted sandbox is killed normally; the other is left for
	// --kill-on-exit at teardown, whose leftover check covers it.
	if err := long[0].Kill(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetSandbox(ctx(t), long[0].ID); err != nil || got.State != "killed" {
		t.Errorf("adopted sandbox after kill: %+v, %v", got, err)
	}
	d.vmGone(t, long[0].ID)
}
