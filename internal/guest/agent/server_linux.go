//go:build linux

package agent

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// Version is the agent's version, reported by Health.
var Version = "dev"

// Server implements the agent's gRPC service.
type Server struct {
	agentpb.UnimplementedAgentServer

	reaper *reaper
	log    *slog.Logger

	mu        sync.Mutex // guards sandboxID
	sandboxID string     // set by Prepare; "" until then
}

// NewServer returns a server; it starts the reaper, so call it once.
func NewServer(log *slog.Logger) *Server {
	return &Server{reaper: newReaper(), log: log}
}

// ServePort serves the host over the named virtio-serial port until the
// process ends. It never returns on a host disconnect.
func (s *Server) ServePort(portPath string) error {
	gs := grpc.NewServer(
		grpc.MaxRecvMsgSize(8<<20), grpc.MaxSendMsgSize(8<<20),
		// The handshake deadline must not fire after a restore, when the
		// guest clock may have jumped; the sync token already proved the
		// host is there.
		grpc.ConnectionTimeout(365*24*time.Hour),
		grpc.ChainUnaryInterceptor(recoverUnary(s.log)),
		grpc.ChainStreamInterceptor(recoverStream(s.log)),
	)
	agentpb.RegisterAgentServer(gs, s)
	l := newPortListener(portPath)
	if prewarmWanted() {
		pw := &prewarmer{run: s.prewarm}
		l.onSession, l.beforeSync = pw.start, pw.wait
	}
	return gs.Serve(l)
}

func recoverUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("handler panic", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "agent handler panic in %s", info.FullMethod)
			}
		}()
		resp, err = h(ctx, req)
		return resp, statusOf(err)
	}
}

func recoverStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("handler panic", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "agent handler panic in %s", info.FullMethod)
			}
		}()
		return statusOf(h(srv, ss))
	}
}

// statusOf gives every handler error a gRPC status, so the host can
// classify it: a bare context error (the call was cancelled or the session
// ended under it) keeps its meaning instead of arriving as Unknown.
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	case errors.Is(err, io.EOF):
		return status.Error(codes.Unavailable, "host ended the call")
	}
	return status.Error(codes.Internal, err.Error())
}

// Health implements agentpb.AgentServer.
func (s *Server) Health(ctx context.Context, _ *agentpb.HealthRequest) (*agentpb.HealthResponse, error) {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return nil, status.Errorf(codes.Internal, "uname: %v", err)
	}
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	host, _ := os.Hostname()
	s.mu.Lock()
	id := s.sandboxID
	s.mu.Unlock()
	return &agentpb.HealthResponse{
		KernelRelease:  unix.ByteSliceToString(uts.Release[:]),
		AgentVersion:   Version,
		UptimeMs:       ts.Nano() / 1e6,
		Hostname:       host,
		SandboxId:      id,
		GuestUnixNanos: time.Now().UnixNano(),
	}, nil
}

// Prepare implements agentpb.AgentServer: set the clock, reseed the CRNG,
// take the sandbox's identity.
func (s *Server) Prepare(ctx context.Context, req *agentpb.PrepareRequest) (*agentpb.PrepareResponse, error) {
	resp := &agentpb.PrepareResponse{}
	if req.UnixNanos > 0 {
		resp.ClockSkewNs = time.Now().UnixNano() - req.UnixNanos
		ts := unix.NsecToTimespec(req.UnixNanos)
		if err := unix.ClockSettime(unix.CLOCK_REALTIME, &ts); err != nil {
			return nil, status.Errorf(codes.Internal, "set clock: %v", err)
		}
	}
	if len(req.Entropy) > 0 {
		if err := addEntropy(req.Entropy); err != nil {
			return nil, status.Errorf(codes.Internal, "reseed crng: %v", err)
		}
	}
	if req.Hostname != "" {
		if err := validHostname(req.Hostname); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%v", err)
		}
		if err := unix.Sethostname([]byte(req.Hostname)); err != nil {
			return nil, status.Errorf(codes.Internal, "set hostname: %v", err)
		}
		// Best effort: the root overlay is writable in memory only.
		_ = os.WriteFile("/etc/hostname", []byte(req.Hostname+"\n"), 0o644)
	}
	if req.Net != nil {
		if err := configureNetwork(req.Net); err != nil {
			return nil, status.Errorf(codes.Internal, "configure network: %v", err)
		}
	}
	if req.SandboxId != "" {
		s.mu.Lock()
		s.sandboxID = req.SandboxId
		s.mu.Unlock()
	}
	return resp, nil
}

func validHostname(h string) error {
	if len(h) > 63 {
		return fmt.Errorf("hostname longer than 63 bytes")
	}
	for _, r := range h {
		if !(r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("hostname has invalid character %q", r)
		}
	}
	return nil
}

// addEntropy credits buf to the kernel's input pool and forces the CRNG to
// reseed from it, so clones restored from one snapshot diverge at once.
func addEntropy(buf []byte) error {
	f, err := os.OpenFile("/dev/random", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// struct rand_pool_info { int entropy_count; int buf_size; __u32 buf[]; }
	info := make([]byte, 8+len(buf))
	binary.NativeEndian.PutUint32(info[0:], uint32(len(buf)*8))
	binary.NativeEndian.PutUint32(info[4:], uint32(len(buf)))
	copy(info[8:], buf)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.RNDADDENTROPY, uintptr(unsafe.Pointer(&info[0]))); e != 0 {
		return fmt.Errorf("RNDADDENTROPY: %w", e)
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.RNDRESEEDCRNG, 0); e != 0 {
		return fmt.Errorf("RNDRESEEDCRNG: %w", e)
	}
	return nil
}

// checkPath enforces the protocol's path rule: absolute, already clean, no
// NUL. The guest is throwaway, so any clean absolute path is the caller's
// to use; what is refused is ambiguity.
func checkPath(p string) error {
	switch {
	case p == "":
		return status.Error(codes.InvalidArgument, "path is empty")
	case !strings.HasPrefix(p, "/"):
		return status.Errorf(codes.InvalidArgument, "path %q is not absolute", p)
	case strings.ContainsRune(p, 0):
		return status.Error(codes.InvalidArgument, "path contains a NUL byte")
	case len(p) > 4096:
		return status.Error(codes.InvalidArgument, "path longer than 4096 bytes")
	case filepath.Clean(p) != p:
		return status.Errorf(codes.InvalidArgument, "path %q is not clean (has . or .. elements, // or a trailing /)", p)
	}
	return nil
}

// fsStatus maps a filesystem error to a gRPC status without echoing more
// than the path the caller sent.
func fsStatus(op, path string, err error) error {
	code := guest.StatusCode(errdefs.FSClass(err))
	var perr *fs.PathError
	if errors.As(err, &perr) {
		err = perr.Err
	}
	return status.Errorf(code, "%s %s: %v", op, path, err)
}

// WriteFile implements agentpb.AgentServer. The file is written under a
// temporary name and renamed into place, so a reader never sees a partial
// file and an abandoned upload leaves nothing behind.
func (s *Server) WriteFile(stream agentpb.Agent_WriteFileServer) (err error) {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hdr := first.GetHeader()
	if hdr == nil {
		return status.Error(codes.InvalidArgument, "first write message must be a header")
	}
	if err := checkPath(hdr.Path); err != nil {
		return err
	}
	mode := fs.FileMode(hdr.Mode & 0o7777)
	if mode == 0 {
		mode = 0o644
	}
	dir := filepath.Dir(hdr.Path)
	if hdr.MakeParents {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fsStatus("mkdir", dir, err)
		}
	}
	if fi, err := os.Stat(hdr.Path); err == nil && fi.IsDir() {
		return status.Errorf(codes.FailedPrecondition, "write %s: is a directory", hdr.Path)
	}
	tmp, err := os.CreateTemp(dir, ".airlock-upload-*")
	if err != nil {
		return fsStatus("write", hdr.Path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var n int64
	for {
		msg, rerr := stream.Recv()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
		data := msg.GetData()
		if _, werr := tmp.Write(data); werr != nil {
			return fsStatus("write", hdr.Path, werr)
		}
		n += int64(len(data))
	}
	if err := tmp.Chmod(mode); err != nil {
		return fsStatus("chmod", hdr.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fsStatus("write", hdr.Path, err)
	}
	if err := os.Rename(tmp.Name(), hdr.Path); err != nil {
		return fsStatus("write", hdr.Path, err)
	}
	return stream.SendAndClose(&agentpb.WriteFileResponse{Bytes: n})
}

// ReadFile implements agentpb.AgentServer.
func (s *Server) ReadFile(req *agentpb.ReadFileRequest, stream agentpb.Agent_ReadFileServer) error {
	if err := checkPath(req.Path); err != nil {
		return err
	}
	// O_NONBLOCK: opening a FIFO nobody writes would otherwise block this
	// handler forever (and a thread with it); it is refused below like any
	// special file.
	f, err := os.OpenFile(req.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fsStatus("read", req.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fsStatus("read", req.Path, err)
	}
	if fi.IsDir() {
		return status.Errorf(codes.FailedPrecondition, "read %s: is a directory", req.Path)
	}
	if !fi.Mode().IsRegular() {
		// Devices and pipes can be endless (/dev/zero); refuse rather than
		// stream forever.
		return status.Errorf(codes.InvalidArgument, "read %s: not a regular file", req.Path)
	}
	if pseudo := pseudoFS(f); pseudo != "" {
		// procfs and sysfs files look regular but are views of kernel
		// state (/proc/self/mem is the agent's own memory): not files of
		// the sandbox's.
		return status.Errorf(codes.InvalidArgument, "read %s: a %s file, not one of the sandbox's files", req.Path, pseudo)
	}
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		return fsStatus("read", req.Path, err)
	}
	if req.MaxBytes > 0 && fi.Size() > req.MaxBytes {
		return status.Errorf(codes.ResourceExhausted, "read %s: %d bytes exceeds the limit of %d", req.Path, fi.Size(), req.MaxBytes)
	}
	if err := stream.Send(&agentpb.ReadFileResponse{Size: fi.Size()}); err != nil {
		return err
	}
	buf := make([]byte, guest.ChunkSize)
	var sent int64
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
			sent += int64(n)
			if req.MaxBytes > 0 && sent > req.MaxBytes {
				// The file grew while being read (procfs, or a writer).
				return status.Errorf(codes.ResourceExhausted, "read %s: exceeds the limit of %d bytes", req.Path, req.MaxBytes)
			}
			if err := stream.Send(&agentpb.ReadFileResponse{Data: buf[:n]}); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fsStatus("read", req.Path, rerr)
		}
	}
}

// pseudoFS names the kernel filesystem f is on when it is not a real one.
func pseudoFS(f *os.File) string {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return ""
	}
	switch st.Type {
	case unix.PROC_SUPER_MAGIC:
		return "procfs"
	case unix.SYSFS_MAGIC:
		return "sysfs"
	case unix.CGROUP2_SUPER_MAGIC, unix.CGROUP_SUPER_MAGIC:
		return "cgroupfs"
	case unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC, unix.SECURITYFS_MAGIC, unix.BPF_FS_MAGIC:
		return "kernel"
	}
	return ""
}

func fileInfo(path string, fi fs.FileInfo) *agentpb.FileInfo {
	out := &agentpb.FileInfo{
		Path: path, Name: fi.Name(), Size: fi.Size(), Mode: uint32(fi.Mode()),
		IsDir: fi.IsDir(), ModUnixNanos: fi.ModTime().UnixNano(),
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		out.SymlinkTarget, _ = os.Readlink(path)
	}
	return out
}

// Stat implements agentpb.AgentServer (lstat: links are described, not followed).
func (s *Server) Stat(ctx context.Context, req *agentpb.PathRequest) (*agentpb.FileInfo, error) {
	if err := checkPath(req.Path); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(req.Path)
	if err != nil {
		return nil, fsStatus("stat", req.Path, err)
	}
	return fileInfo(req.Path, fi), nil
}

// List implements agentpb.AgentServer.
func (s *Server) List(ctx context.Context, req *agentpb.PathRequest) (*agentpb.ListResponse, error) {
	if err := checkPath(req.Path); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(req.Path)
	if err != nil {
		return nil, fsStatus("list", req.Path, err)
	}
	out := &agentpb.ListResponse{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		out.Entries = append(out.Entries, fileInfo(filepath.Join(req.Path, e.Name()), fi))
	}
	return out, nil
}

// Remove implements agentpb.AgentServer.
func (s *Server) Remove(ctx context.Context, req *agentpb.RemoveRequest) (*agentpb.RemoveResponse, error) {
	if err := checkPath(req.Path); err != nil {
		return nil, err
	}
	if req.Path == "/" {
		return nil, status.Error(codes.InvalidArgument, "refusing to remove /")
	}
	if _, err := os.Lstat(req.Path); err != nil {
		return nil, fsStatus("remove", req.Path, err)
	}
	var err error
	if req.Recursive {
		err = os.RemoveAll(req.Path)
	} else {
		err = os.Remove(req.Path)
	}
	if err != nil {
		return nil, fsStatus("remove", req.Path, err)
	}
	return &agentpb.RemoveResponse{}, nil
}

// Mkdir implements agentpb.AgentServer.
func (s *Server) Mkdir(ctx context.Context, req *agentpb.MkdirRequest) (*agentpb.MkdirResponse, error) {
	if err := checkPath(req.Path); err != nil {
		return nil, err
	}
	mode := fs.FileMode(req.Mode & 0o7777)
	if mode == 0 {
		mode = 0o755
	}
	var err error
	if req.Parents {
		err = os.MkdirAll(req.Path, mode)
	} else {
		err = os.Mkdir(req.Path, mode)
	}
	if err != nil {
		return nil, fsStatus("mkdir", req.Path, err)
	}
	return &agentpb.MkdirResponse{}, nil
}
