package apitest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
)

// WriteArchive plays the guest: it unpacks the tar stream's directories
// and regular files under dir into the fake's files, refusing names that
// leave dir and any other kind of entry, within maxBytes of files.
func (f *Fake) WriteArchive(_ context.Context, tenant, id, dir string, r io.Reader, maxBytes int64) (guest.ArchiveStats, error) {
	f.mu.Lock()
	_, err := f.running(tenant, id)
	f.mu.Unlock()
	if err != nil {
		return guest.ArchiveStats{}, err
	}
	files, dirs := map[string][]byte{}, []string{dir}
	var st guest.ArchiveStats
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, fmt.Errorf("read archive: %w", err)
		}
		name := path.Join(dir, hdr.Name)
		if strings.HasPrefix(hdr.Name, "/") || slices.Contains(strings.Split(hdr.Name, "/"), "..") {
			return st, errdefs.InvalidArgument("entry %q escapes", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			dirs = append(dirs, name)
		case tar.TypeReg:
			if st.Bytes+hdr.Size > maxBytes {
				return st, errdefs.ResourceExhausted("archive holds more than %d bytes", maxBytes)
			}
			var b bytes.Buffer
			if _, err := io.Copy(&b, tr); err != nil {
				return st, fmt.Errorf("read archive: %w", err)
			}
			files[name] = b.Bytes()
			st.Bytes += int64(b.Len())
		default:
			return st, errdefs.InvalidArgument("entry %q: type %c not accepted", hdr.Name, hdr.Typeflag)
		}
		st.Entries++
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return st, err
	}
	for p, b := range files {
		dirs = append(dirs, path.Dir(p))
		sb.files[p] = b
	}
	for _, d := range dirs {
		for ; d != "/"; d = path.Dir(d) {
			sb.dirs[d] = true
		}
	}
	return st, nil
}

// ReadArchive packs the fake's files under p (or the file p) as a tar
// stream named from p's base name, refusing more than maxBytes before any
// byte is written.
func (f *Fake) ReadArchive(_ context.Context, tenant, id, p string, w io.Writer, maxBytes int64) (int64, error) {
	f.mu.Lock()
	sb, err := f.running(tenant, id)
	var buf bytes.Buffer
	if err == nil {
		err = sb.pack(&buf, p)
	}
	f.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case maxBytes > 0 && int64(buf.Len()) > maxBytes:
		return 0, errdefs.ResourceExhausted("%s makes more than %d bytes", p, maxBytes)
	}
	return io.Copy(w, &buf)
}

func (sb *fakeSandbox) pack(w io.Writer, p string) error {
	base := path.Base(p)
	tw := tar.NewWriter(w)
	add := func(name string, b []byte, dir bool) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}
		if dir {
			hdr = &tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if b, ok := sb.files[p]; ok {
		if err := add(base, b, false); err != nil {
			return err
		}
		return tw.Close()
	}
	if !sb.dirs[p] {
		return errdefs.NotFound("%s: no such file or directory", p)
	}
	var names []string
	for d := range sb.dirs {
		if strings.HasPrefix(d, p+"/") || d == p {
			names = append(names, d)
		}
	}
	for n := range sb.files {
		if strings.HasPrefix(n, p+"/") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		_, isFile := sb.files[n]
		if err := add(path.Join(base, strings.TrimPrefix(n, p)), sb.files[n], !isFile); err != nil {
			return err
		}
	}
	return tw.Close()
}
