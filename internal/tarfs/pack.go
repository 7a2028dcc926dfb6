package tarfs

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// PackOptions tune Pack.
type PackOptions struct {
	// Prefix names the entries. For a directory, "" writes its contents
	// (entries relative to it) and "out" writes "out/", "out/a", ...; a
	// file is one entry named Prefix, or its base name when Prefix is "".
	Prefix string
	// MaxBytes bounds the stream (0: no bound). A tree clearly bigger is
	// refused before the first byte; one that grows while packed is cut
	// with resource_exhausted.
	MaxBytes int64
}

// Pack writes src, a directory or a regular file, to w as a tar stream.
// src itself may be a link the caller named; links below it are stored as
// links, never followed. Stats.Bytes is the size of the stream.
func Pack(w io.Writer, src string, opt PackOptions) (Stats, error) {
	if opt.Prefix != "" {
		if n, err := relName(opt.Prefix); err != nil || n != opt.Prefix {
			return Stats{}, errdefs.InvalidArgument("prefix %q must be a clean relative name", opt.Prefix)
		}
	}
	fi, err := os.Stat(src)
	if err != nil {
		return Stats{}, fsError("stat", src, err)
	}
	lw := &limitWriter{w: w, max: opt.MaxBytes}
	p := &packer{tw: tar.NewWriter(lw), prefix: opt.Prefix}
	switch {
	case fi.Mode().IsRegular():
		if p.prefix == "" {
			p.prefix = filepath.Base(src)
		}
		if opt.MaxBytes > 0 && tarSize(fi.Size())+1024 > opt.MaxBytes {
			return Stats{}, tooBig(src, tarSize(fi.Size())+1024, opt.MaxBytes)
		}
		err = p.file(os.DirFS(filepath.Dir(src)), filepath.Base(src), p.prefix, fi)
	case fi.IsDir():
		err = p.dir(src, opt.MaxBytes)
	default:
		return Stats{}, errdefs.InvalidArgument("%s is not a regular file or a directory", src)
	}
	if err == nil {
		err = p.tw.Close()
	}
	return Stats{Entries: p.entries, Bytes: lw.n}, err
}

func tooBig(src string, size, max int64) error {
	return errdefs.ResourceExhausted("%s makes an archive of about %d bytes, over the limit of %d bytes", src, size, max)
}

// tarSize is an entry's share of a stream: a header and padded content.
func tarSize(n int64) int64 { return 512 + (n+511)/512*512 }

// packer is one Pack in progress.
type packer struct {
	tw      *tar.Writer
	prefix  string
	entries int64
}

func (p *packer) dir(src string, maxBytes int64) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return fsError("open", src, err)
	}
	defer root.Close()
	fsys := root.FS()
	if maxBytes > 0 {
		size, err := measure(fsys)
		if err != nil {
			return err
		}
		if size > maxBytes {
			return tooBig(src, size, maxBytes)
		}
	}
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fsError("read", name, err)
		}
		entry := path.Join(p.prefix, name)
		if entry == "." {
			return nil // contents only: the directory itself has no entry
		}
		fi, err := d.Info()
		if err != nil {
			return fsError("stat", name, err)
		}
		switch {
		case d.IsDir():
			return p.header(fi, entry+"/", "")
		case d.Type()&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, name)
			if err != nil {
				return fsError("readlink", name, err)
			}
			return p.header(fi, entry, target)
		case d.Type().IsRegular():
			return p.file(fsys, name, entry, fi)
		}
		return nil // FIFOs, sockets, devices: not files to copy
	})
}

// measure is about the size of the stream a tree makes.
func measure(fsys fs.FS) (int64, error) {
	total := int64(1024) // the end-of-archive blocks
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fsError("read", name, err)
		}
		var size int64
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return fsError("stat", name, err)
			}
			size = fi.Size()
		}
		total += tarSize(size)
		return nil
	})
	return total, err
}

func (p *packer) header(fi fs.FileInfo, name, link string) error {
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return fmt.Errorf("tar header for %s: %w", name, err)
	}
	hdr.Name = name
	hdr.Uname, hdr.Gname = "", ""
	if err := p.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	p.entries++
	return nil
}

// file writes one regular file; one that changed size meanwhile fails.
func (p *packer) file(fsys fs.FS, name, entry string, fi fs.FileInfo) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fsError("open", name, err)
	}
	defer f.Close()
	if err := p.header(fi, entry, ""); err != nil {
		return err
	}
	if _, err := io.CopyN(p.tw, f, fi.Size()); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	return nil
}
