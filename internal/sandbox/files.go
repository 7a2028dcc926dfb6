package sandbox

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/store"
)

// Files: every call on a sandbox's filesystem is audited with the path
// only as a keyed digest (path_hmac), never the path itself.

// fileOp runs a file operation and audits it with its byte count and a
// keyed digest of the path.
func (m *Manager) fileOp(ctx context.Context, tenant, id, event, path string, fn func(l *live) (int64, error)) (int64, error) {
	return m.fileOpDetail(ctx, tenant, id, event, path, nil, fn)
}

// fileOpDetail is fileOp with more audit detail, which fn may fill in
// (counts only: never names or content).
func (m *Manager) fileOpDetail(ctx context.Context, tenant, id, event, path string, detail map[string]string,
	fn func(l *live) (int64, error)) (int64, error) {
	if err := m.admit(); err != nil {
		return 0, err
	}
	began := time.Now()
	var info Info
	var n int64
	err := m.use(ctx, tenant, id, func(l *live) error {
		info = l.infoCopy()
		var err error
		n, err = fn(l)
		return err
	})
	if info.ID == "" {
		return n, err
	}
	rec := auditRecord(event, info)
	rec.Bytes, rec.DurationMS, rec.Outcome = n, time.Since(began).Milliseconds(), outcomeOf(err)
	rec.Detail = map[string]string{"path_hmac": pathDigest(info.ID, path)}
	for k, v := range detail {
		rec.Detail[k] = v
	}
	m.audit(ctx, rec)
	return n, err
}

// WriteFile streams r into a file in the sandbox, creating parents.
func (m *Manager) WriteFile(ctx context.Context, tenant, id, path string, r io.Reader, mode uint32) (int64, error) {
	if m.cfg.Failpoint == FailUploadMidway {
		r = &failReader{r: r, n: 64 << 10, point: FailUploadMidway, m: m}
	}
	return m.fileOp(ctx, tenant, id, store.EventFileWrite, path, func(l *live) (int64, error) {
		return l.machine.WriteFile(ctx, path, r, mode, true)
	})
}

// ReadFile streams a file out of the sandbox.
func (m *Manager) ReadFile(ctx context.Context, tenant, id, path string, w io.Writer, maxBytes int64) (int64, error) {
	return m.fileOp(ctx, tenant, id, store.EventFileRead, path, func(l *live) (int64, error) {
		return l.machine.ReadFile(ctx, path, w, maxBytes)
	})
}

// WriteArchive streams the tar stream r into the sandbox, where the guest
// unpacks it into directory dir (made with its parents if missing),
// writing at most maxBytes of files. The bytes are relayed, never parsed
// here. Audited as archive_write with the bytes written, the entry count
// and a keyed digest of dir.
func (m *Manager) WriteArchive(ctx context.Context, tenant, id, dir string, r io.Reader, maxBytes int64) (guest.ArchiveStats, error) {
	if m.cfg.Failpoint == FailUploadMidway {
		r = &failReader{r: r, n: 64 << 10, point: FailUploadMidway, m: m}
	}
	var st guest.ArchiveStats
	detail := map[string]string{}
	_, err := m.fileOpDetail(ctx, tenant, id, store.EventArchiveWrite, dir, detail, func(l *live) (int64, error) {
		release, err := l.takeArchiveSlot()
		if err != nil {
			return 0, err
		}
		defer release()
		st, err = l.machine.WriteArchive(ctx, dir, r, maxBytes)
		detail["entries"] = strconv.FormatInt(st.Entries, 10)
		return st.Bytes, err
	})
	return st, err
}

// ReadArchive streams path (a directory or a file) out of the sandbox as
// the guest's tar stream, at most maxBytes (0: any), relayed unparsed.
// Audited as archive_read with the stream's size.
func (m *Manager) ReadArchive(ctx context.Context, tenant, id, path string, w io.Writer, maxBytes int64) (int64, error) {
	return m.fileOp(ctx, tenant, id, store.EventArchiveRead, path, func(l *live) (int64, error) {
		release, err := l.takeArchiveSlot()
		if err != nil {
			return 0, err
		}
		defer release()
		return l.machine.ReadArchive(ctx, path, w, maxBytes)
	})
}

// StatFile describes a path in the sandbox.
func (m *Manager) StatFile(ctx context.Context, tenant, id, path string) (FileInfo, error) {
	var fi *agentpb.FileInfo
	err := m.use(ctx, tenant, id, func(l *live) error {
		var err error
		fi, err = l.machine.Stat(ctx, path)
		return err
	})
	if err != nil {
		return FileInfo{}, err
	}
	return fileInfoFromAgent(fi), nil
}

// ListFiles lists a directory in the sandbox.
func (m *Manager) ListFiles(ctx context.Context, tenant, id, path string) ([]FileInfo, error) {
	var ents []*agentpb.FileInfo
	err := m.use(ctx, tenant, id, func(l *live) error {
		var err error
		ents, err = l.machine.List(ctx, path)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]FileInfo, 0, len(ents))
	for _, fi := range ents {
		out = append(out, fileInfoFromAgent(fi))
	}
	return out, nil
}

// RemoveFile deletes a path in the sandbox.
func (m *Manager) RemoveFile(ctx context.Context, tenant, id, path string, recursive bool) error {
	_, err := m.fileOp(ctx, tenant, id, store.EventFileRemove, path, func(l *live) (int64, error) {
		return 0, l.machine.Remove(ctx, path, recursive)
	})
	return err
}

// MakeDir creates a directory (and its parents) in the sandbox.
func (m *Manager) MakeDir(ctx context.Context, tenant, id, path string) error {
	return m.use(ctx, tenant, id, func(l *live) error {
		return l.machine.Mkdir(ctx, path, 0, true)
	})
}
