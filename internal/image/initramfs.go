package image

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cavaliergopher/cpio"
)

// initramfsFormat changes whenever the initramfs layout changes, so old
// cache entries are not reused.
const initramfsFormat = "v1"

// ModulesLoadOrder is where, inside the initramfs, the agent finds the
// modules to load, one file name per line, in order.
const ModulesLoadOrder = "/lib/modules/load.order"

// FindAgent locates the static airlock-agent binary: $AIRLOCK_AGENT, else
// next to the running executable.
func FindAgent() (string, error) { return FindBinary("airlock-agent", "AIRLOCK_AGENT") }

// FindBinary locates one of airlock's own binaries: the path in the
// environment variable env if set, else the file name next to the running
// executable (where `make build` puts them all).
func FindBinary(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if !exists(p) {
			return "", fmt.Errorf("%s=%s does not exist", env, p)
		}
		return p, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate %s: %w", name, err)
	}
	p := filepath.Join(filepath.Dir(self), name)
	if !exists(p) {
		return "", fmt.Errorf("%s not found next to %s (build it with `make build`, or set %s)", name, self, env)
	}
	return p, nil
}

// BuildInitramfs returns the path of an uncompressed newc initramfs holding
// the agent as /init and the kernel's guest modules, building it if needed.
// Uncompressed, because QEMU copies it straight into guest memory and the
// guest then need not decompress it under emulation.
func BuildInitramfs(cacheDir string, k *Kernel, agentPath string) (string, error) {
	agentSum, err := FileSHA256(agentPath)
	if err != nil {
		return "", fmt.Errorf("hash agent: %w", err)
	}
	dir := filepath.Join(cacheDir, "initramfs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(dir, KeyOf(initramfsFormat, k.CacheKey(), agentSum, strings.Join(GuestModules, ","))+".cpio")
	if exists(final) {
		// Readable by the jailed VMMs that load it (it holds the agent and
		// kernel modules, nothing secret); older caches made it 0600.
		return final, os.Chmod(final, 0o644)
	}
	tmp, err := os.CreateTemp(dir, ".build-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := writeInitramfs(tmp, k, agentPath); err != nil {
		tmp.Close()
		return "", fmt.Errorf("build initramfs: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return final, publish(tmp.Name(), final)
}

func writeInitramfs(w io.Writer, k *Kernel, agentPath string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := cpio.NewWriter(bw)
	var inode int64
	now := time.Unix(0, 0) // reproducible archives
	dir := func(name string) error {
		inode++
		return cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeDir | 0o755, Links: 2, Inode: inode, ModTime: now})
	}
	file := func(name, src string, mode cpio.FileMode) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		inode++
		if err := cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeReg | mode, Links: 1, Size: fi.Size(), Inode: inode, ModTime: now}); err != nil {
			return err
		}
		_, err = io.Copy(cw, f)
		return err
	}
	bytesFile := func(name string, data []byte) error {
		inode++
		if err := cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeReg | 0o644, Links: 1, Size: int64(len(data)), Inode: inode, ModTime: now}); err != nil {
			return err
		}
		_, err := cw.Write(data)
		return err
	}
	for _, d := range []string{"dev", "proc", "sys", "mnt", "lib", "lib/modules"} {
		if err := dir(d); err != nil {
			return err
		}
	}
	if err := file("init", agentPath, 0o755); err != nil {
		return err
	}
	var order strings.Builder
	for _, m := range GuestModules {
		base := filepath.Base(m)
		if err := file("lib/modules/"+base, filepath.Join(k.ModulesDir(), base), 0o644); err != nil {
			return err
		}
		order.WriteString(base + "\n")
	}
	if err := bytesFile(strings.TrimPrefix(ModulesLoadOrder, "/"), []byte(order.String())); err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return err
	}
	return errors.Join(bw.Flush())
}
