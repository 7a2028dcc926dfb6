//go:build linux

package agent

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/tarfs"
)

// WriteArchive implements agentpb.AgentServer: the stream is unpacked by
// internal/tarfs, confined to the directory, within the header's limits.
func (s *Server) WriteArchive(stream agentpb.Agent_WriteArchiveServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hdr := first.GetHeader()
	if hdr == nil {
		return status.Error(codes.InvalidArgument, "first archive message must be a header")
	}
	if err := checkPath(hdr.Path); err != nil {
		return err
	}
	if err := os.MkdirAll(hdr.Path, 0o755); err != nil {
		return fsStatus("mkdir", hdr.Path, err)
	}
	r := &recvReader{recv: func() ([]byte, error) {
		m, err := stream.Recv()
		return m.GetData(), err
	}}
	st, err := tarfs.Extract(r, hdr.Path, tarfs.Options{Limits: tarfs.Limits{MaxBytes: hdr.MaxBytes, MaxEntries: hdr.MaxEntries}})
	if err != nil {
		return tarStatus(err)
	}
	// Take what follows the end-of-archive blocks (the host bounds it), so
	// the host's sending ends the way it began.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	return stream.SendAndClose(&agentpb.WriteArchiveResponse{Entries: st.Entries, Bytes: st.Bytes})
}

// recvReader reads the data messages of a client stream as one stream.
type recvReader struct {
	recv func() ([]byte, error)
	buf  []byte
}

func (r *recvReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		b, err := r.recv()
		if err != nil {
			return 0, err
		}
		r.buf = b
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// ReadArchive implements agentpb.AgentServer: the path is packed by
// internal/tarfs (links below it stored, never followed) and sent in
// chunks. The first chunk goes once ChunkSize bytes are ready, so errors
// found while measuring and starting arrive with no data before them.
func (s *Server) ReadArchive(req *agentpb.ReadArchiveRequest, stream agentpb.Agent_ReadArchiveServer) error {
	if err := checkPath(req.Path); err != nil {
		return err
	}
	if req.Path == "/" {
		return status.Error(codes.InvalidArgument, "read archive /: name a directory below /")
	}
	// O_NONBLOCK: a FIFO must not block the check; Pack refuses it.
	f, err := os.OpenFile(req.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fsStatus("read archive", req.Path, err)
	}
	pseudo := pseudoFS(f)
	f.Close()
	if pseudo != "" {
		return status.Errorf(codes.InvalidArgument, "read archive %s: a %s path, not one of the sandbox's files", req.Path, pseudo)
	}
	bw := bufio.NewWriterSize(sendWriter{stream}, guest.ChunkSize)
	_, err = tarfs.Pack(bw, req.Path, tarfs.PackOptions{Prefix: filepath.Base(req.Path), MaxBytes: req.MaxBytes})
	if err == nil {
		err = bw.Flush()
	}
	return tarStatus(err)
}

// sendWriter sends each write as one data message (gRPC copies it before
// Send returns).
type sendWriter struct {
	stream agentpb.Agent_ReadArchiveServer
}

func (w sendWriter) Write(p []byte) (int, error) {
	if err := w.stream.Send(&agentpb.ReadArchiveResponse{Data: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// tarStatus gives a tarfs error (classed with errdefs) its gRPC code. A
// status already there (the host's stream failing) is kept.
func tarStatus(err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err
	}
	return status.Error(guest.StatusCode(errdefs.Class(err)), err.Error())
}
