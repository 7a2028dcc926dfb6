package qemu

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Migration streams to and from files travel over unix sockets in the
// machine's state directory, copied by this process: QEMU never runs a
// shell (`exec:` URIs), so it can run with spawn=deny and needs no
// access to where state files are kept.
const (
	saveSock = "save.sock"
	loadSock = "load.sock"
)

// SaveState implements vmm.Machine.
func (m *Machine) SaveState(ctx context.Context, path string, ramInFile bool) (err error) {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("VM %s: state file: %w", m.id, err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("VM %s: state file: %w", m.id, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	ln, sock, err := m.listenForStream()
	if err != nil {
		return err
	}
	defer os.Remove(sock)
	defer ln.Close()
	copied := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			copied <- err
			return
		}
		defer c.Close()
		_, err = io.Copy(out, c)
		copied <- err
	}()
	if err := m.saveStateURI(ctx, "unix:"+sock, ramInFile); err != nil {
		ln.Close()
		<-copied
		return err
	}
	// QEMU reports completion once it has written everything; the copy
	// ends when it closes the connection.
	select {
	case err := <-copied:
		if err != nil {
			return fmt.Errorf("VM %s: copy state: %w", m.id, err)
		}
	case <-ctx.Done():
		ln.Close()
		return fmt.Errorf("VM %s: copy state: %w", m.id, ctx.Err())
	}
	return nil
}

// LoadState implements vmm.Machine.
func (m *Machine) LoadState(ctx context.Context, path string, ramInFile bool) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("VM %s: state file: %w", m.id, err)
	}
	defer in.Close()
	sock := filepath.Join(m.stateDir, loadSock)
	if err := m.setIgnoreShared(ctx, ramInFile); err != nil {
		return err
	}
	if _, err := m.QMP(ctx, "migrate-incoming", map[string]any{"uri": "unix:" + sock}); err != nil {
		return err
	}
	defer os.Remove(sock)
	// QEMU is listening once migrate-incoming has returned.
	c, err := (&net.Dialer{}).DialContext(ctx, "unix", sock)
	if err != nil {
		return fmt.Errorf("VM %s: connect to its state socket: %w", m.id, err)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := io.Copy(c, in)
		c.Close()
		sent <- err
	}()
	if err := m.awaitMigration(ctx); err != nil {
		c.Close()
		<-sent
		return err
	}
	if err := <-sent; err != nil {
		return fmt.Errorf("VM %s: send state: %w", m.id, err)
	}
	return nil
}

// Resume implements vmm.Machine.
func (m *Machine) Resume(ctx context.Context) error { return m.Cont(ctx) }

// deviceStateFile is where QEMU writes a device-only state, in its own
// state directory (the one it can write when jailed).
const deviceStateFile = "device.state"

// SaveDeviceState implements vmm.Machine with QMP's
// xen-save-devices-state, which, despite its name, is QEMU's generic
// "every section but RAM" save (Xen and COLO keep RAM elsewhere; so does
// a fork, see vm.SnapshotForFork). The stream has no configuration
// section, which is why the loading machine needs BootSpec.DeviceState.
func (m *Machine) SaveDeviceState(ctx context.Context, path string) error {
	if _, err := m.QMP(ctx, "stop", nil); err != nil {
		return err
	}
	tmp := filepath.Join(m.stateDir, deviceStateFile)
	os.Remove(tmp)
	defer os.Remove(tmp)
	// A stopped machine stays stopped: QEMU resumes only a running one.
	if _, err := m.QMP(ctx, "xen-save-devices-state", map[string]any{"filename": tmp, "live": false}); err != nil {
		return fmt.Errorf("VM %s: save device state: %w", m.id, err)
	}
	// QEMU wrote tmp as the jail's user, in a directory it may write: copy
	// it out to a file of this process's own.
	b, err := os.ReadFile(tmp)
	if err != nil {
		return fmt.Errorf("VM %s: device state: %w", m.id, err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("VM %s: device state: %w", m.id, err)
	}
	return nil
}

// listenForStream listens on a fresh socket in the machine's state
// directory for QEMU to send a migration stream to.
func (m *Machine) listenForStream() (net.Listener, string, error) {
	sock := filepath.Join(m.stateDir, saveSock)
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, "", fmt.Errorf("VM %s: listen for its state: %w", m.id, err)
	}
	if m.jailed {
		// QEMU connects as the jail's user.
		if err := os.Chown(sock, m.uid, m.gid); err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("VM %s: state socket: %w", m.id, err)
		}
	}
	return ln, sock, nil
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
