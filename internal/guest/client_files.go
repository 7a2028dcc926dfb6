package guest

import (
	"context"
	"fmt"
	"io"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// WriteFile streams r into the guest file at path (absolute). It returns the
// number of bytes written. Memory used is bounded by ChunkSize and gRPC's
// flow-control window, whatever the file's size.
func (c *Client) WriteFile(ctx context.Context, path string, r io.Reader, mode uint32, makeParents bool) (int64, error) {
	stream, err := c.rpc.WriteFile(ctx)
	if err != nil {
		return 0, mapErr(ctx, "write file", err)
	}
	hdr := &agentpb.WriteFileHeader{Path: path, Mode: mode, MakeParents: makeParents}
	if err := stream.Send(&agentpb.WriteFileRequest{Msg: &agentpb.WriteFileRequest_Header{Header: hdr}}); err != nil {
		_, rerr := stream.CloseAndRecv()
		return 0, mapErr(ctx, "write file", firstErr(rerr, err))
	}
	buf := make([]byte, ChunkSize)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := stream.Send(&agentpb.WriteFileRequest{Msg: &agentpb.WriteFileRequest_Data{Data: buf[:n]}}); err != nil {
				_, cerr := stream.CloseAndRecv()
				return 0, mapErr(ctx, "write file", firstErr(cerr, err))
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			// Abandon the stream so the agent discards the partial file.
			return 0, fmt.Errorf("read source for %s: %w", path, rerr)
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return 0, mapErr(ctx, "write file", err)
	}
	return resp.Bytes, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil && e != io.EOF {
			return e
		}
	}
	return errs[len(errs)-1]
}

// ReadFile streams the guest file at path into w and returns its size.
// maxBytes > 0 refuses larger files with ResourceExhausted before any byte
// is sent.
func (c *Client) ReadFile(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.ReadFile(ctx, &agentpb.ReadFileRequest{Path: path, MaxBytes: maxBytes})
	if err != nil {
		return 0, mapErr(ctx, "read file", err)
	}
	return relay(ctx, "read file", path, stream, w, maxBytes)
}

// chunkStream is an agent stream of data chunks (a file, a tar stream).
type chunkStream[T interface{ GetData() []byte }] interface{ Recv() (T, error) }

// relay copies stream's chunks into w as they come and returns how many
// bytes it copied. maxBytes > 0 bounds them here too: the agent refuses a
// bigger source before sending, and a guest that sends more anyway is cut
// with ResourceExhausted.
func relay[T interface{ GetData() []byte }](ctx context.Context, op, path string, stream chunkStream[T], w io.Writer, maxBytes int64) (int64, error) {
	var n int64
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, mapErr(ctx, op, err)
		}
		data := msg.GetData()
		if maxBytes > 0 && n+int64(len(data)) > maxBytes {
			return n, errdefs.ResourceExhausted("agent %s %s: more than the limit of %d bytes", op, path, maxBytes)
		}
		if len(data) > 0 {
			if _, err := w.Write(data); err != nil {
				return n, fmt.Errorf("%s: deliver %s: %w", op, path, err)
			}
			n += int64(len(data))
		}
	}
}

// ArchiveStats is what the agent reports of an unpacked archive.
type ArchiveStats struct {
	Entries int64 // directories, files and links written
	Bytes   int64 // bytes of regular files written
}

// WriteArchive streams the tar stream r to the agent, which unpacks it
// into the directory dir (see internal/tarfs for what it refuses). The
// bytes are relayed, never parsed here. maxBytes bounds the files'
// bytes written; the agent's answer is checked against it.
func (c *Client) WriteArchive(ctx context.Context, dir string, r io.Reader, maxBytes int64) (ArchiveStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a failed read of r abandons the stream
	stream, err := c.rpc.WriteArchive(ctx)
	if err != nil {
		return ArchiveStats{}, mapErr(ctx, "write archive", err)
	}
	hdr := &agentpb.WriteArchiveHeader{Path: dir, MaxBytes: maxBytes}
	if err := stream.Send(&agentpb.WriteArchiveRequest{Msg: &agentpb.WriteArchiveRequest_Header{Header: hdr}}); err != nil {
		_, rerr := stream.CloseAndRecv()
		return ArchiveStats{}, mapErr(ctx, "write archive", firstErr(rerr, err))
	}
	buf := make([]byte, ChunkSize)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := stream.Send(&agentpb.WriteArchiveRequest{Msg: &agentpb.WriteArchiveRequest_Data{Data: buf[:n]}}); err != nil {
				_, cerr := stream.CloseAndRecv()
				return ArchiveStats{}, mapErr(ctx, "write archive", firstErr(cerr, err))
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return ArchiveStats{}, fmt.Errorf("read archive for %s: %w", dir, rerr)
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return ArchiveStats{}, mapErr(ctx, "write archive", err)
	}
	st := ArchiveStats{Entries: resp.Entries, Bytes: resp.Bytes}
	if st.Entries < 0 || st.Bytes < 0 || (maxBytes > 0 && st.Bytes > maxBytes) {
		return ArchiveStats{}, errdefs.New(errdefs.ErrInternal, "agent write archive: implausible answer (%d entries, %d bytes)", st.Entries, st.Bytes)
	}
	return st, nil
}

// ReadArchive streams the agent's tar stream of path (a directory or a
// file) into w, relayed as it comes, and returns its size. maxBytes > 0
// bounds the stream: the agent refuses a bigger tree before sending, and
// a guest that sends more anyway is cut here with ResourceExhausted.
func (c *Client) ReadArchive(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.ReadArchive(ctx, &agentpb.ReadArchiveRequest{Path: path, MaxBytes: maxBytes})
	if err != nil {
		return 0, mapErr(ctx, "read archive", err)
	}
	return relay(ctx, "read archive", path, stream, w, maxBytes)
}

// Stat describes one guest path.
func (c *Client) Stat(ctx context.Context, path string) (*agentpb.FileInfo, error) {
	r, err := c.rpc.Stat(ctx, &agentpb.PathRequest{Path: path})
	return r, mapErr(ctx, "stat", err)
}

// List describes the entries of a guest directory.
func (c *Client) List(ctx context.Context, path string) ([]*agentpb.FileInfo, error) {
	r, err := c.rpc.List(ctx, &agentpb.PathRequest{Path: path})
	if err != nil {
		return nil, mapErr(ctx, "list", err)
	}
	return r.Entries, nil
}

// Remove deletes a guest path (recursively if asked).
func (c *Client) Remove(ctx context.Context, path string, recursive bool) error {
	_, err := c.rpc.Remove(ctx, &agentpb.RemoveRequest{Path: path, Recursive: recursive})
	return mapErr(ctx, "remove", err)
}

// Mkdir creates a guest directory.
func (c *Client) Mkdir(ctx context.Context, path string, mode uint32, parents bool) error {
	_, err := c.rpc.Mkdir(ctx, &agentpb.MkdirRequest{Path: path, Mode: mode, Parents: parents})
	return mapErr(ctx, "mkdir", err)
}
