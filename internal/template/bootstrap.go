//go:build linux

package template

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// bootstrap runs mmdebstrap into root, reporting its "I:" phase lines as
// step details. Its full output is kept only for the error message.
func bootstrap(ctx context.Context, suite string, pkgs []string, root string, st *steps) error {
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return errdefs.FailedPrecondition("mmdebstrap is needed to build template roots (apt-get install mmdebstrap)")
	}
	if os.Geteuid() != 0 {
		return errdefs.PermissionDenied("building a template root needs root (mmdebstrap --mode=root)")
	}
	args := []string{
		"--variant=minbase",
		"--mode=root",
		"--include=" + strings.Join(pkgs, ","),
		`--aptopt=Acquire::Retries "3"`,
	}
	// Without this hook, bookworm's init-system-helpers pulls in the
	// usrmerge package and with it all of perl (~60 MB in every image);
	// the hook makes the merged-/usr symlinks itself and installs the
	// empty usr-is-merged package instead.
	if _, err := os.Stat(mergedUsrHooks); err == nil {
		args = append(args, "--hook-dir="+mergedUsrHooks)
	}
	args = append(args, suite, root)
	cmd := exec.CommandContext(ctx, "mmdebstrap", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// Own process group, stopped with SIGTERM: mmdebstrap then stops apt and
	// dpkg and unmounts what it mounted in the tree; a bare SIGKILL would
	// leave /proc, /sys and /dev mounted inside our temporary directory.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = bootstrapStopGrace
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw

	var tail []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		sc.Split(scanLinesOrCR)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			if tail = append(tail, line); len(tail) > bootstrapTailLines {
				tail = tail[1:]
			}
			if phase, ok := strings.CutPrefix(line, "I: "); ok {
				// "running --setup-hook directly: /usr/share/...": the
				// phase, not the paths.
				phase, _, _ = strings.Cut(phase, ": /")
				st.detail("%s", strings.TrimSuffix(phase, "..."))
			}
		}
		io.Copy(io.Discard, pr) // never block mmdebstrap on a full pipe
	}()
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	pw.Close()
	<-readDone
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("mmdebstrap: %w", ctx.Err())
		}
		out := strings.Join(tail, "\n")
		if strings.Contains(out, "Temporary failure resolving") || strings.Contains(out, "Failed to fetch") ||
			strings.Contains(out, "Could not connect") || strings.Contains(out, "Could not resolve") {
			return errdefs.Unavailable("mmdebstrap could not download packages: %v\n%s", err, out)
		}
		return fmt.Errorf("mmdebstrap %s: %w\n%s", suite, err, out)
	}
	return nil
}

// bootstrapCached fills root with the trimmed bootstrap of suite + pkgs:
// unpacked from cacheDir/rootfs/bootstrap-<key>.tar when an earlier build
// made it, else built by mmdebstrap, trimmed, and archived for the next
// build. Templates that differ only in copied files (the document tool
// changes with every release) then skip the download and install, the
// slow and network-dependent part, and only copy, trim and pack. The final
// tree is the same either way: trimming is idempotent, and BuildRootfs
// trims again after copying files.
func bootstrapCached(ctx context.Context, cacheDir, suite string, pkgs []string, root string, st *steps) error {
	sorted := append([]string(nil), pkgs...)
	sort.Strings(sorted)
	sum := sha256.Sum256([]byte(rootfsFormat + "\x00" + suite + "\x00" + strings.Join(sorted, ",")))
	archive := filepath.Join(cacheDir, "rootfs", "bootstrap-"+hex.EncodeToString(sum[:])[:24]+".tar")
	if _, err := os.Stat(archive); err == nil {
		st.detail("unpacking the cached bootstrap %s", filepath.Base(archive))
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		if err := runTar(ctx, "-xpf", archive, "-C", root); err != nil {
			return err
		}
		if _, err := os.Stat(manifestPath(archive)); err != nil {
			return writeManifest(archive, suite, sorted) // cached before manifests existed
		}
		return nil
	}
	if base, extra := nearestBootstrap(cacheDir, suite, sorted); base != "" {
		// A parent's root is cached: add what this one adds to it.
		st.detail("the cached bootstrap %s, plus %s", filepath.Base(base), strings.Join(extra, " "))
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		if err := runTar(ctx, "-xpf", base, "-C", root); err != nil {
			return err
		}
		if err := installInto(ctx, root, extra, st); err != nil {
			return err
		}
	} else if err := bootstrap(ctx, suite, pkgs, root, st); err != nil {
		return err
	}
	if err := trimTree(root); err != nil {
		return err
	}
	// Archive next to the final name, then rename: a crash never leaves a
	// half archive under the name a later build trusts. The manifest comes
	// last: it is what makes the archive a base for others.
	tmp := archive + ".part"
	if err := runTar(ctx, "-cpf", tmp, "-C", root, "."); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, archive); err != nil {
		return err
	}
	return writeManifest(archive, suite, sorted)
}

// runTar runs GNU tar with numeric owners and extended attributes kept, as
// an image needs them.
func runTar(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "tar", append([]string{"--numeric-owner", "--xattrs"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tar %s: %w: %s", args[0], err, bytes.TrimSpace(out))
	}
	return nil
}

// scanLinesOrCR splits on \n or \r, so progress bars redrawn with \r come
// out as separate lines.
func scanLinesOrCR(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
