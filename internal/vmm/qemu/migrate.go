package qemu

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/vmm"
)

// safePath is what may appear in an exec: migration URI, which QEMU runs
// through /bin/sh: airlock's own absolute paths, nothing a shell would
// interpret.
var safePath = regexp.MustCompile(`^/[A-Za-z0-9/._-]+$`)

func shellSafe(path string) error {
	if !safePath.MatchString(path) || filepath.Clean(path) != path {
		return errdefs.InvalidArgument("state path %q has characters unsafe for a migration URI", path)
	}
	return nil
}

// SaveState implements vmm.Machine.
func (m *Machine) SaveState(ctx context.Context, path string, ramInFile bool) error {
	if err := shellSafe(path); err != nil {
		return err
	}
	return m.saveStateURI(ctx, "exec:cat > "+path, ramInFile)
}

// LoadState implements vmm.Machine.
func (m *Machine) LoadState(ctx context.Context, path string, ramInFile bool) error {
	if err := shellSafe(path); err != nil {
		return err
	}
	return m.MigrateIn(ctx, "exec:cat "+path, ramInFile)
}

// Resume implements vmm.Machine.
func (m *Machine) Resume(ctx context.Context) error { return m.Cont(ctx) }

// MigrateTo implements vmm.Machine: a full-RAM live migration over a unix
// socket in dst's state directory. x-ignore-shared is off on both ends:
// the source's RAM is private and must travel.
func (m *Machine) MigrateTo(ctx context.Context, dst vmm.Machine) error {
	d, ok := dst.(*Machine)
	if !ok {
		return errdefs.InvalidArgument("migrate to a %T: not a QEMU machine", dst)
	}
	uri := "unix:" + filepath.Join(d.stateDir, "migrate.sock")
	if err := d.setIgnoreShared(ctx, false); err != nil {
		return err
	}
	if _, err := d.QMP(ctx, "migrate-incoming", map[string]any{"uri": uri}); err != nil {
		return err
	}
	if err := m.saveStateURI(ctx, uri, false); err != nil {
		return err
	}
	return d.awaitMigration(ctx)
}

// ConnectAgent opens a raw connection to the agent's socket. For a restore
// it must be opened before the migration stream is loaded, so that the
// port's saved "host connected" state matches reality and the guest can
// read the host as soon as it runs.
func (m *Machine) ConnectAgent(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", m.AgentSocket())
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("VM %s: connect agent socket: %w", m.id, err)
		case <-m.exited:
			return nil, m.ExitError()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// setIgnoreShared sets the x-ignore-shared migration capability. It must
// be set the same way on both ends of a migration.
func (m *Machine) setIgnoreShared(ctx context.Context, on bool) error {
	_, err := m.QMP(ctx, "migrate-set-capabilities", map[string]any{
		"capabilities": []map[string]any{{"capability": "x-ignore-shared", "state": on}},
	})
	return err
}

// MigrateIn loads a migration stream from uri into a machine started with
// Incoming, and waits until it has completed. The machine stays paused;
// call Cont.
func (m *Machine) MigrateIn(ctx context.Context, uri string, ignoreShared bool) error {
	if err := m.setIgnoreShared(ctx, ignoreShared); err != nil {
		return err
	}
	if _, err := m.QMP(ctx, "migrate-incoming", map[string]any{"uri": uri}); err != nil {
		return err
	}
	return m.awaitMigration(ctx)
}

// Cont resumes a paused machine.
func (m *Machine) Cont(ctx context.Context) error {
	_, err := m.QMP(ctx, "cont", nil)
	return err
}

// saveStateURI stops the machine and writes its migration stream to uri.
// With ignoreShared the RAM held in a shared memory file stays there and
// only device state is written. The machine is left paused.
func (m *Machine) saveStateURI(ctx context.Context, uri string, ignoreShared bool) error {
	if err := m.setIgnoreShared(ctx, ignoreShared); err != nil {
		return err
	}
	// QEMU 7.2 throttles migration to 32 MiB/s by default, which turns a
	// 200 MiB fork into seconds. The guest is stopped and the stream is
	// local: let it run at memory speed.
	if _, err := m.QMP(ctx, "migrate-set-parameters", map[string]any{"max-bandwidth": int64(1) << 40}); err != nil {
		return err
	}
	if _, err := m.QMP(ctx, "stop", nil); err != nil {
		return err
	}
	if _, err := m.QMP(ctx, "migrate", map[string]any{"uri": uri}); err != nil {
		return err
	}
	return m.awaitMigration(ctx)
}

// awaitMigration polls query-migrate until the migration ends.
func (m *Machine) awaitMigration(ctx context.Context) error {
	began := time.Now()
	for {
		raw, err := m.QMP(ctx, "query-migrate", nil)
		if err != nil {
			return err
		}
		var st struct {
			Status    string `json:"status"`
			ErrorDesc string `json:"error-desc"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("query-migrate: %w", err)
		}
		switch st.Status {
		case "completed":
			return nil
		case "failed", "cancelled":
			return errdefs.Unavailable("VM %s: migration %s: %s", m.id, st.Status, st.ErrorDesc)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VM %s: migration: %w", m.id, ctx.Err())
		case <-m.exited:
			return m.ExitError()
		case <-time.After(pollInterval(time.Since(began))):
		}
	}
}

// pollInterval backs off: short migrations (device state, tens of KB)
// finish within a few ms; long ones (full RAM) should not be slowed by a
// storm of monitor connections competing for QEMU's main loop.
func pollInterval(elapsed time.Duration) time.Duration {
	switch {
	case elapsed < 20*time.Millisecond:
		return time.Millisecond
	case elapsed < 200*time.Millisecond:
		return 5 * time.Millisecond
	default:
		return 20 * time.Millisecond
	}
}

// AwaitAgentPortClosed runs trigger (which ends the host's agent session)
// and waits until the guest has closed its end of the agent port, as
// reported by QEMU's VSERPORT_CHANGE event. Only then is it safe to
// reconnect: a host that reconnects at once can hide its disconnect from
// the guest, whose old session would then swallow the next bytes.
func (m *Machine) AwaitAgentPortClosed(ctx context.Context, trigger func()) error {
	mon, err := qmp.NewSocketMonitor("unix", m.QMPSocket(), 2*time.Second)
	if err != nil {
		return fmt.Errorf("qmp connect: %w", err)
	}
	if err := mon.Connect(); err != nil {
		return fmt.Errorf("qmp handshake: %w", err)
	}
	events, err := mon.Events(ctx)
	if err != nil {
		mon.Disconnect()
		return err
	}
	defer func() {
		mon.Disconnect()
		go func() {
			for range events { // the monitor's reader blocks until drained
			}
		}()
	}()
	trigger()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return fmt.Errorf("VM %s: QMP closed while waiting for the agent port", m.id)
			}
			if ev.Event == "VSERPORT_CHANGE" && ev.Data["id"] == agentPortID && ev.Data["open"] == false {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("VM %s: waiting for the agent to close its port: %w", m.id, ctx.Err())
		case <-m.exited:
			return m.ExitError()
		}
	}
}
