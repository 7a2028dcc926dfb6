package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/tarfs"
)

// remoteRE recognises ID:/path operands of cp.
var remoteRE = regexp.MustCompile(`^([a-z0-9-]{1,64}):(/.*)$`)

// sbxCopyCmd is `airlock sandbox cp`, with docker cp's semantics (the
// table is in README.md): a directory is copied whole through the
// archive routes, a file through the files routes.
func sbxCopyCmd(f *clientFlags) *cobra.Command {
	var mode string
	cmd := &cobra.Command{
		Use:   "cp [--mode M] SRC ID:DEST | cp ID:SRC DEST",
		Short: "Copy files or directories into or out of a sandbox (docker cp semantics; '-' is a tar stream on stdin/stdout)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := remoteRE.FindStringSubmatch(args[0]), remoteRE.FindStringSubmatch(args[1])
			if (src == nil) == (dst == nil) {
				return usageError{errdefs.InvalidArgument("exactly one operand must be ID:/absolute/path")}
			}
			var perm uint32
			if mode != "" {
				m, err := strconv.ParseUint(mode, 8, 32)
				if err != nil || m > 0o7777 {
					return usageError{errdefs.InvalidArgument("--mode %q: want octal like 0600", mode)}
				}
				perm = uint32(m)
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			cp := &copier{ctx: cmd.Context(), stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout(), json: f.json, mode: mode != "", perm: perm}
			if dst != nil {
				cp.sbx = c.Sandbox(dst[1])
				return cp.in(args[0], dst[2])
			}
			cp.sbx = c.Sandbox(src[1])
			return cp.out(src[2], args[1])
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "permission bits of a file written into the sandbox (octal, default 0644)")
	return cmd
}

// copier is one cp.
type copier struct {
	ctx    context.Context
	sbx    *client.Sandbox
	stdin  io.Reader
	stdout io.Writer
	json   bool
	mode   bool // --mode given
	perm   uint32
}

// operand is a cp path split into what docker cp reads from its spelling:
// a trailing "/" (into a directory) and a final "/." (a directory's
// contents, not the directory).
type operand struct {
	clean    string
	slash    bool // ends in "/" or "/."
	contents bool // ends in "/." (or is ".")
}

func parseOperand(p string, clean func(string) string) operand {
	o := operand{clean: clean(p)}
	o.contents = p == "." || strings.HasSuffix(p, "/.")
	o.slash = o.contents || strings.HasSuffix(p, "/")
	return o
}

// in copies the local SRC into the sandbox at DEST.
func (c *copier) in(local, remote string) error {
	dst := parseOperand(remote, path.Clean)
	if local == "-" {
		res, err := c.sbx.Files().WriteArchive(c.ctx, dst.clean, c.stdin)
		if err != nil {
			return err
		}
		return c.report(res)
	}
	src := parseOperand(local, filepath.Clean)
	fi, err := os.Stat(local)
	if err != nil {
		return localErr(err)
	}
	exists, isDir, err := c.remoteKind(dst.clean)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		target := dst.clean
		switch {
		case exists && !isDir:
			return errdefs.FailedPrecondition("cannot copy directory %s onto the file %s", local, dst.clean)
		case exists && !src.contents:
			target = path.Join(dst.clean, filepath.Base(src.clean))
		}
		res, err := c.sbx.Files().UploadDir(c.ctx, local, target)
		if err != nil {
			return err
		}
		return c.report(res)
	case !fi.Mode().IsRegular():
		return errdefs.InvalidArgument("%s is not a regular file or a directory", local)
	case src.slash:
		return errdefs.InvalidArgument("%s is a file, not a directory", local)
	}
	target := dst.clean
	if dst.slash || isDir {
		target = path.Join(dst.clean, filepath.Base(src.clean))
	}
	return c.putFile(local, target)
}

// remoteKind says whether p exists in the sandbox and is a directory.
func (c *copier) remoteKind(p string) (exists, isDir bool, err error) {
	fi, err := c.sbx.Files().Stat(c.ctx, p)
	switch {
	case errors.Is(err, client.ErrNotFound):
		// (A missing sandbox is reported by the copy itself.)
		return false, false, nil
	case err != nil:
		return false, false, err
	}
	return true, fi.IsDir, nil
}

func (c *copier) putFile(local, remote string) error {
	fh, err := os.Open(local)
	if err != nil {
		return localErr(err)
	}
	defer fh.Close()
	var opts []client.WriteOption
	if c.mode {
		opts = append(opts, client.WithMode(c.perm))
	}
	n, err := c.sbx.Files().Write(c.ctx, remote, fh, opts...)
	if err != nil {
		return err
	}
	return c.report(map[string]int64{"bytes": n})
}

// out copies the sandbox's SRC to the local DEST.
func (c *copier) out(remote, local string) error {
	src := parseOperand(remote, path.Clean)
	if local == "-" {
		_, err := c.sbx.Files().ReadArchive(c.ctx, src.clean, c.stdout)
		return err
	}
	dst := parseOperand(local, filepath.Clean)
	fi, err := c.sbx.Files().Stat(c.ctx, src.clean)
	if err != nil {
		return err
	}
	lfi, lerr := os.Stat(local)
	if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
		return localErr(lerr)
	}
	exists := lerr == nil
	if fi.IsDir {
		target := dst.clean
		switch {
		case exists && !lfi.IsDir():
			return errdefs.FailedPrecondition("cannot copy directory %s onto the file %s", src.clean, local)
		case exists && !src.contents:
			target = filepath.Join(dst.clean, path.Base(src.clean))
		}
		res, err := c.sbx.Files().DownloadDir(c.ctx, src.clean, target)
		if err != nil {
			return err
		}
		return c.report(res)
	}
	if src.slash {
		return errdefs.InvalidArgument("%s is a file, not a directory", src.clean)
	}
	target := dst.clean
	if dst.slash || (exists && lfi.IsDir()) {
		if err := os.MkdirAll(dst.clean, 0o755); err != nil {
			return localErr(err)
		}
		target = filepath.Join(dst.clean, path.Base(src.clean))
	}
	return c.getFile(src.clean, target, fs.FileMode(fi.Mode)&fs.ModePerm)
}

// getFile writes the remote file to local through replaceFile, with the
// guest file's permission bits less this process's umask (as docker cp).
func (c *copier) getFile(remote, local string, mode fs.FileMode) error {
	rc, err := c.sbx.Files().Read(c.ctx, remote)
	if err != nil {
		return err
	}
	defer rc.Close()
	var n int64
	err = replaceFile(local, func(w io.Writer) error {
		if n, err = io.Copy(w, rc); err != nil {
			return fmt.Errorf("copy %s: %w: %w", remote, client.ErrUnavailable, err)
		}
		return nil
	}, mode&^tarfs.ProcessUmask(), localErr)
	if err != nil {
		return err
	}
	return c.report(map[string]int64{"bytes": n})
}

// replaceFile writes local through a temporary file beside it and a
// rename, so an interrupted copy never leaves a truncated file under that
// name; the file gets mode. fill's error comes back as it is, the local
// filesystem's through fsErr.
func replaceFile(local string, fill func(io.Writer) error, mode fs.FileMode, fsErr func(error) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(local), ".airlock-get-*")
	if err != nil {
		return fsErr(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return fsErr(err)
	}
	if err := tmp.Close(); err != nil {
		return fsErr(err)
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return fsErr(err)
	}
	return nil
}

// report prints what was copied under --json.
func (c *copier) report(v any) error {
	if c.json {
		return printJSON(c.stdout, v)
	}
	return nil
}

// localErr classes an error of the local filesystem (never "unavailable":
// the daemon was not the problem).
func localErr(err error) error {
	class := errdefs.ErrInvalidArgument
	switch {
	case errors.Is(err, fs.ErrNotExist):
		class = errdefs.ErrNotFound
	case errors.Is(err, fs.ErrPermission):
		class = errdefs.ErrPermissionDenied
	case errors.Is(err, fs.ErrExist):
		class = errdefs.ErrAlreadyExists
	}
	return errdefs.New(class, "%v", err)
}
