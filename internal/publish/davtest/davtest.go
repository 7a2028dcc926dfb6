package davtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv makes a missing nginx or openssl fail tests instead of
// skipping them.
const RequireEnv = "AIRLOCK_REQUIRE_NGINX"

// Options say how the server runs.
type Options struct {
	// Addr is the IPv4 address and port it listens on.
	Addr netip.AddrPort
	// NetNS, if set, is the named network namespace nginx runs in (ip
	// netns exec); Addr must be one of its addresses.
	NetNS string
	// User and Password, if set, require HTTP Basic auth.
	User, Password string
	// TLS serves HTTPS with a self-signed certificate for Addr's address
	// and Names (Server.CAFile).
	TLS   bool
	Names []string
}

// Server is a running nginx.
type Server struct {
	Root   string // the DAV root: a PUT to /a/b lands in Root/a/b
	URL    string // http(s)://Addr
	CAFile string // PEM of the certificate served (TLS only)
	dir    string
}

// Available skips (or, under RequireEnv=1, fails) t when nginx or openssl
// is missing, and returns nginx's path.
func Available(t testing.TB) string {
	t.Helper()
	for _, b := range []string{"nginx", "openssl"} {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv(RequireEnv) == "1" {
				t.Fatalf("%s is required (%s=1): %v", b, RequireEnv, err)
			}
			t.Skipf("%s not installed (run scripts/setup.sh --test; set %s=1 to fail instead)", b, RequireEnv)
		}
	}
	p, _ := exec.LookPath("nginx")
	return p
}

// FreeLoopback is a loopback TCP port nothing listens on now.
func FreeLoopback(t testing.TB) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return netip.MustParseAddrPort(l.Addr().String())
}

// Start runs nginx with o and waits until it accepts connections.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	nginx := Available(t)
	dir := t.TempDir()
	s := &Server{Root: filepath.Join(dir, "dav"), dir: dir}
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	scheme, listen := "http", o.Addr.String()
	var tlsConf string
	if o.TLS {
		scheme, listen = "https", listen+" ssl"
		s.CAFile = filepath.Join(dir, "cert.pem")
		key := filepath.Join(dir, "key.pem")
		writeCert(t, s.CAFile, key, o.Addr.Addr(), o.Names)
		tlsConf = fmt.Sprintf("ssl_certificate %s;\n    ssl_certificate_key %s;", s.CAFile, key)
	}
	var auth string
	if o.User != "" {
		hp := filepath.Join(dir, "htpasswd")
		writeHtpasswd(t, hp, o.User, o.Password)
		auth = fmt.Sprintf("auth_basic \"airlock davtest\";\n      auth_basic_user_file %s;", hp)
	}
	s.URL = scheme + "://" + o.Addr.String()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(confTemplate, dir, listen, tlsConf, s.Root, auth)), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{nginx, "-p", dir + "/", "-c", conf, "-e", filepath.Join(dir, "error.log")}
	if o.NetNS != "" {
		argv = append([]string{"ip", "netns", "exec", o.NetNS}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// SIGQUIT: the master stops its workers and exits.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	s.waitReady(t, o.Addr, exited, out)
	return s
}

// waitReady dials until nginx accepts, failing at once if it exited.
func (s *Server) waitReady(t testing.TB, addr netip.AddrPort, exited <-chan error, out *strings.Builder) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s\n%s", err, out.String(), log)
		default:
		}
		c, err := net.DialTimeout("tcp4", addr.String(), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a state: the listener
	}
}

// File reads what a PUT to urlPath left on disk.
func (s *Server) File(urlPath string) ([]byte, error) {
	if strings.Contains(urlPath, "..") {
		return nil, errors.New("davtest: no .. in paths")
	}
	return os.ReadFile(filepath.Join(s.Root, filepath.FromSlash(urlPath)))
}

// Logs is nginx's access and error logs, for searching.
func (s *Server) Logs() string {
	a, _ := os.ReadFile(filepath.Join(s.dir, "access.log"))
	e, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
	return string(a) + string(e)
}

// confTemplate: dir, listen, tls, root, auth. Workers run as root so they
// can write the test's private temporary directory.
const confTemplate = `daemon off;
user root;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 64; }
http {
  access_log %[1]s/access.log;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen %[2]s;
    %[3]s
    root %[4]s;
    client_max_body_size 64m;
    location / {
      dav_methods PUT DELETE MKCOL COPY MOVE;
      create_full_put_path on;
      dav_access user:rw;
      %[5]s
    }
  }
}
`

// writeHtpasswd writes user's entry, hashed by openssl passwd -apr1 (the
// password goes on stdin, never on a command line).
func writeHtpasswd(t testing.TB, path, user, password string) {
	t.Helper()
	cmd := exec.Command("openssl", "passwd", "-apr1", "-stdin")
	cmd.Stdin = strings.NewReader(password + "\n")
	hash, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl passwd: %v", err)
	}
	if err := os.WriteFile(path, []byte(user+":"+strings.TrimSpace(string(hash))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeCert writes a self-signed certificate for ip and names, and its
// key, as PEM.
func writeCert(t testing.TB, certPath, keyPath string, ip netip.Addr, names []string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "airlock davtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{ip.AsSlice()}, DNSNames: names, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
}
