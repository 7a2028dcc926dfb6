package apitest

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/airlock-dev/airlock/internal/api"
)

// Recorder is a Backend (the real one it wraps) that also counts how many
// body bytes the last WriteFile took from its reader, so a test can check
// that the server refused an oversized upload without reading it.
type Recorder struct {
	api.Backend
	lastWriteRead atomic.Int64
}

// NewRecorder wraps be.
func NewRecorder(be api.Backend) *Recorder { return &Recorder{Backend: be} }

// LastWriteRead is how many body bytes the last WriteFile read.
func (r *Recorder) LastWriteRead() int64 { return r.lastWriteRead.Load() }

// WriteFile counts what the backend reads, then passes the call on.
func (r *Recorder) WriteFile(ctx context.Context, tenant, id, path string, body io.Reader, mode uint32) (int64, error) {
	cr := &countingReader{r: body}
	n, err := r.Backend.WriteFile(ctx, tenant, id, path, cr, mode)
	r.lastWriteRead.Store(cr.n)
	return n, err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
