package clustertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv names the variable that turns a missing PostgreSQL from a
// skip into a failure.
const RequireEnv = "AIRLOCK_REQUIRE_PG"

// BinEnv names a directory holding initdb and pg_ctl, overriding the
// search of /usr/lib/postgresql/*/bin.
const BinEnv = "AIRLOCK_PG_BIN"

// Server is one throwaway PostgreSQL server.
type Server struct {
	// bin is the directory of initdb and pg_ctl; immutable.
	bin string
	// dir is the temporary directory holding data/ and the socket, owned
	// by the uid the server runs as; removed by Close.
	dir string
	// cred is who the server runs as: nil when not root (it runs as the
	// test's own user), else the postgres (or nobody) user, because
	// PostgreSQL refuses to run as root. Immutable.
	cred *syscall.Credential
	// Started is how long initdb and the first start took together.
	Started time.Duration
	// dbs numbers the databases made by Database, for their names.
	dbs atomic.Int64
	// port is the number in the socket's name (.s.PGSQL.<port>): 5432,
	// or a standby's own; immutable.
	port int
	// mu serialises Stop, Start, Kill, Promote and Rebuild.
	mu sync.Mutex
}

// pkg is the package's shared server, set by Main; nil when it could not
// start (skip is then why).
var (
	pkg  *Server
	skip error
)

// Main runs a test package's tests with a shared server: call it from
// TestMain. The server starts before the tests (its start time is printed)
// and is stopped and removed after them, whatever they did. Without the
// binaries the tests run and Database skips them (fails them when
// AIRLOCK_REQUIRE_PG=1).
func Main(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	pkg, err = Start()
	if err != nil {
		skip = err
		fmt.Fprintf(os.Stderr, "clustertest: no PostgreSQL: %v\n", err)
	} else {
		fmt.Fprintf(os.Stderr, "clustertest: PostgreSQL started in %s\n", pkg.Started.Round(time.Millisecond))
		defer pkg.Close()
	}
	return m.Run()
}

// Shared returns the package's server, skipping (or failing, under
// AIRLOCK_REQUIRE_PG=1) when there is none.
func Shared(t testing.TB) *Server {
	t.Helper()
	if pkg == nil {
		unavailable(t, skip)
	}
	return pkg
}

// Database returns the DSN of a new, empty database on the package's
// server, dropped with the server at exit.
func Database(t testing.TB) string {
	t.Helper()
	return Shared(t).Database(t)
}

// Private starts a server of the test's own, which it may Stop and Start;
// it is removed when the test ends.
func Private(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.Close)
	return s
}

func unavailable(t testing.TB, why error) {
	t.Helper()
	if why == nil {
		why = errors.New("Main was not called from TestMain")
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("PostgreSQL is required (%s=1): %v", RequireEnv, why)
	}
	t.Skipf("no PostgreSQL: %v (set %s=1 to fail instead)", why, RequireEnv)
}

// FindBin returns the directory of initdb and pg_ctl: $AIRLOCK_PG_BIN, or
// the newest /usr/lib/postgresql/N/bin (Debian's layout).
func FindBin() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		return d, checkBin(d)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if checkBin(d) == nil {
			return d, nil
		}
	}
	return "", errors.New("no initdb and pg_ctl under /usr/lib/postgresql/*/bin (Debian package postgresql-15)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func checkBin(d string) error {
	for _, b := range []string{"initdb", "pg_ctl"} {
		if _, err := os.Stat(filepath.Join(d, b)); err != nil {
			return err
		}
	}
	return nil
}

// Start makes a new cluster in a temporary directory and starts it:
// trust authentication, fsync off, a unix socket in that directory and no
// TCP listener. Close stops and removes it.
func Start() (_ *Server, err error) {
	began := time.Now()
	s, err := newServer(defaultPort)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := s.run("initdb", "-D", s.dataDir(), "-A", "trust", "-N", "-E", "UTF8", "--locale=C", "-U", "postgres"); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("listen_addresses = ''\nfsync = off\n"+
		"synchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\nshared_buffers = 64MB\nwal_keep_size = 256MB\n%s", s.ownConf())
	if err := s.appendConf(conf); err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	s.Started = time.Since(began)
	return s, nil
}

// defaultPort is a primary's port.
const defaultPort = 5432

// newServer makes the directory of a server that will listen on port,
// owned by the user it will run as.
func newServer(port int) (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, port: port}
	if s.cred, err = serverUser(); err != nil {
		return nil, err
	}
	if s.dir, err = os.MkdirTemp("", "airlock-pg-"); err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// ownConf is the configuration that is this server's alone: where its
// socket is. Appended last, it wins over what a base backup copied from
// another server.
func (s *Server) ownConf() string {
	return fmt.Sprintf("unix_socket_directories = '%s'\nport = %d\n", s.dir, s.port)
}

func (s *Server) appendConf(conf string) error {
	f, err := os.OpenFile(filepath.Join(s.dataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(conf)
	return errors.Join(err, f.Close())
}

// serverUser is who the server runs as: nil (ourselves) unless root.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and no postgres or nobody user to run PostgreSQL as")
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// run runs a PostgreSQL program as the server's user.
func (s *Server) run(prog string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, prog), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// Start starts the server and waits until it accepts connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.dataDir(), "-l", filepath.Join(s.dir, "log"))
}

// Stop stops the server at once (fast mode: sessions are cut, as in a
// crash of the connection), and waits until it has.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run("pg_ctl", "stop", "-w", "-t", "60", "-m", "fast", "-D", s.dataDir())
}

// Close stops the server if it runs and removes its directory.
func (s *Server) Close() {
	if s.dir == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); err == nil {
		_ = s.run("pg_ctl", "stop", "-w", "-t", "60", "-m", "immediate", "-D", s.dataDir())
	}
	os.RemoveAll(s.dir)
}

// DSN is the connection string of database db.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", s.dir, s.port, db)
}

// Database creates a new empty database t_<n> and returns its DSN.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	return s.DSN(s.CreateDatabase(t))
}

// CreateDatabase creates a new empty database t_<n> and returns its name.
func (s *Server) CreateDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t_%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatalf("clustertest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("clustertest: create database %s: %v", name, err)
	}
	return name
}
