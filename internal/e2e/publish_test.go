package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
	"github.com/airlock-dev/airlock/internal/publish"
	"github.com/airlock-dev/airlock/internal/publish/davtest"
)

// publishLine is the part of an `airlock review --json --publish` line
// the test reads.
type publishLine struct {
	File      string           `json:"file"`
	OK        bool             `json:"ok"`
	Error     *lineError       `json:"error"`
	Report    string           `json:"report"`
	Published *jobs.Published  `json:"published"`
	TimingsMS map[string]int64 `json:"timings_ms"`
}

func onePublishLine(t *testing.T, out string) publishLine {
	t.Helper()
	var ls []publishLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l publishLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not an NDJSON line: %v: %.200s", err, sc.Text())
		}
		ls = append(ls, l)
	}
	if len(ls) != 1 {
		t.Fatalf("%d lines, want 1:\n%s", len(ls), out)
	}
	return ls[0]
}

// TestReviewPublish reviews a contract and publishes its HTML report to a
// real WebDAV server (nginx, HTTP Basic over TLS, on a host of its own)
// through the daemon's egress proxy: the report's bytes land on the
// server; the publish is audited with the document's and the report's
// SHA-256 and the host; another host is refused (publish_refused) before
// anything leaves; and the DAV password appears in no guest-visible
// environment or file, audit record, store file, daemon log or CLI output.
func TestReviewPublish(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "legal-doc-review")
	p := startPublishEnv(t, e)
	c := p.d.client(t, tenantA)
	dir, outDir := t.TempDir(), t.TempDir()
	cs, err := reviewcorpus.Generate(reviewcorpus.Options{Seed: 34, Contracts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reviewcorpus.WritePDFs(dir, cs, reviewcorpus.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, cs[0].Name+".pdf")
	matter := uniq("M-pub")
	began := time.Now()
	out, stderr, code := p.d.cli(t, tenantA, "review", "--json", "--timeout", "4m", "--meta", "matter="+matter, "--out", outDir,
		"--publish", "http://dav.internal/reports/2026/", doc)
	if code != 0 {
		t.Fatalf("airlock review --publish: exit %d\n%s\n%s", code, out, stderr)
	}
	l := onePublishLine(t, out)
	p.checkLanded(t, l)
	t.Logf("published %d bytes: PUT through the proxy %d ms, publish sandbox total %d ms; whole batch %s",
		l.Published.Bytes, l.Published.PutMS, l.Published.TotalMS, time.Since(began).Round(time.Millisecond))
	checkPublishAudit(t, c, matter, l)

	// Another host fails closed with a stable code; nothing is written.
	out2, stderr2, code := p.d.cli(t, tenantA, "review", "--json", "--timeout", "4m", "--publish", "http://other.internal/reports/", doc)
	l2 := onePublishLine(t, out2)
	if code != 1 || l2.OK || l2.Error == nil || l2.Error.Code != publish.CodeRefused || !strings.Contains(l2.Error.Message, "not a credential route") {
		t.Fatalf("publish to other.internal: exit %d, line %+v; want exit 1, %s\n%s", code, l2, publish.CodeRefused, stderr2)
	}
	// And through the API: a sandbox asking for that host as a credential
	// route is refused, not opened to it.
	_, err = c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 60, Egress: routeOnly("other.internal")})
	if err == nil || !errors.Is(err, client.ErrFailedPrecondition) || !strings.Contains(err.Error(), "not a credential route") {
		t.Fatalf("API create with other.internal as a credential rule: %v", err)
	}

	timePublish(t, c, l.Published.SHA256)
	guestOut, guestFiles := p.guestView(t, c, matter)
	p.assertNoSecret(t, map[string]string{"guest environment": guestOut, "guest files": guestFiles,
		"review stdout": out + out2, "review stderr": stderr + stderr2})
}

// publishEnv is a DAV server on a host of its own and a daemon whose
// tenant A reaches it as dav.internal, a credential route with HTTP Basic.
type publishEnv struct {
	e       *env
	d       *daemon
	dav     *davtest.Server
	secrets []string // the password and every form of it the route carries
}

func startPublishEnv(t *testing.T, e *env) *publishEnv {
	_, nsName, upIP := upstreamNetns(t, "dav")
	const user = "publisher"
	password := "dav-pw-" + randHex(12)
	p := &publishEnv{e: e}
	p.dav = davtest.Start(t, davtest.Options{Addr: netip.AddrPortFrom(upIP, 443), NetNS: nsName, User: user, Password: password, TLS: true})
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	p.secrets = []string{password, basic, user + ":" + password}
	creds := filepath.Join(t.TempDir(), "credentials.json")
	os.WriteFile(creds, []byte(fmt.Sprintf(`{%q: [{"name": "dav", "host": "dav.internal", "upstream": "https://%s/airlock",
		"header": "Authorization", "value": "Basic %s"}]}`, tenantA, upIP, basic)), 0o600)
	p.d = startDaemon(t, e, "--net", "--net-base-cidr", netpooltest.FreeBase(t, 24), "--proxy-addr", netpooltest.FreeAddr(t),
		"--credentials", creds, "--egress-ca", p.dav.CAFile)
	return p
}

// routeOnly is an egress policy allowing host only, as a credential route.
func routeOnly(host string) *client.EgressPolicy {
	return &client.EgressPolicy{Default: "deny", Allow: []client.EgressRule{{Name: "pub", Domain: host, Credential: true}}}
}

// checkLanded: the file nginx wrote is the report --out wrote, under its
// name in the collection, with the hash and size the line gives.
func (p *publishEnv) checkLanded(t *testing.T, l publishLine) {
	t.Helper()
	if !l.OK || l.Published == nil {
		t.Fatalf("line: %+v", l)
	}
	name := filepath.Base(l.Report)
	if l.Published.URL != "http://dav.internal/reports/2026/"+name {
		t.Errorf("published to %s, want the report's name under the collection", l.Published.URL)
	}
	local, err := os.ReadFile(l.Report)
	if err != nil {
		t.Fatal(err)
	}
	landed, err := p.dav.File("airlock/reports/2026/" + name)
	if err != nil {
		t.Fatalf("nothing on the DAV server: %v\n%s", err, p.dav.Logs())
	}
	if string(landed) != string(local) || publish.SHA256(landed) != l.Published.SHA256 || l.Published.Bytes != len(landed) {
		t.Fatalf("the server holds %d bytes (sha %s); the local report is %d bytes, the line says %+v",
			len(landed), publish.SHA256(landed), len(local), l.Published)
	}
}

// checkPublishAudit: the publish sandbox's records name the document (as
// the review's do), the report's hash and the host; the proxy's record of
// the PUT says 201.
func checkPublishAudit(t *testing.T, c *client.Client, matter string, l publishLine) {
	t.Helper()
	docSHA, reviewDoc := "", ""
	var pubEvents []string
	for _, r := range allAudit(t, c, client.AuditFilter{}) {
		if r.Metadata["matter"] != matter {
			continue
		}
		if r.Metadata["job"] == "review" {
			reviewDoc = r.Metadata["doc_sha256"]
		}
		if r.Metadata["publish_host"] == "" {
			continue
		}
		if r.Metadata["publish_host"] != "dav.internal" || r.Metadata["publish_sha256"] != l.Published.SHA256 || r.Metadata["job"] != "publish" {
			t.Errorf("publish record %d: metadata %v", r.Seq, r.Metadata)
		}
		docSHA = r.Metadata["doc_sha256"]
		pubEvents = append(pubEvents, r.Event)
		if r.Event == "egress" {
			if r.Detail["host"] != "dav.internal" || r.Detail["status"] != "201" || r.Outcome != "ok" || r.Bytes < int64(l.Published.Bytes) {
				t.Errorf("egress record of the PUT: %+v", r)
			}
			t.Logf("the proxy's record of the PUT: %d ms from the guest's connection to the end of the response, %s bytes up",
				r.DurationMS, r.Detail["bytes_up"])
		}
	}
	// doc_sha256 is the document id every job's records use (the first
	// 16 hex digits of its SHA-256).
	if name := filepath.Base(l.Report); len(docSHA) != 16 || docSHA != reviewDoc || !strings.HasSuffix(name, "-"+docSHA[:8]+".html") {
		t.Errorf("publish doc_sha256 %q, review's %q, report %s", docSHA, reviewDoc, name)
	}
	for _, want := range []string{"create", "file_write", "exec", "egress", "kill"} {
		if !containsStr(pubEvents, want) {
			t.Errorf("publish sandbox records %v lack %s", pubEvents, want)
		}
	}
}

// guestView is what a guest given the route sees: it PUTs without any
// credential and the server takes it (the proxy adds it). It returns the
// guest's environment (with the PUT's answer) and its files' contents.
func (p *publishEnv) guestView(t *testing.T, c *client.Client, matter string) (envOut, files string) {
	t.Helper()
	sbx, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 300,
		Metadata: map[string]string{"matter": matter}, Egress: routeOnly("dav.internal")})
	if err != nil {
		t.Fatal(err)
	}
	defer sbx.Kill(ctx(t))
	res, err := sbx.ExecArgv(ctx(t), []string{"bash", "-c", `set -e
exec 3<>/dev/tcp/dav.internal/80
printf 'PUT /reports/guest.txt HTTP/1.1\r\nHost: dav.internal\r\nContent-Length: 6\r\nConnection: close\r\n\r\nguest\n' >&3
head -c 400 <&3; echo
env; for f in /proc/[0-9]*/environ; do tr '\0' '\n' <"$f" 2>/dev/null || true; done
find /etc /root /tmp /run /var /home /job /opt /srv -xdev -type f -size -2M -print0 2>/dev/null | xargs -0 cat 2>/dev/null | base64 -w0`},
		client.WithTimeout(2*time.Minute), client.WithMaxOutputBytes(16<<20))
	if err != nil || res.ExitCode != 0 || res.StdoutTruncated {
		t.Fatalf("guest check: %v %+v", err, res)
	}
	envOut, files = res.Stdout, decodeB64Tail(res.Stdout)
	if len(files) < 1000 || !strings.Contains(files, "Debian") || !strings.Contains(envOut, "PATH=") {
		t.Fatalf("the guest's files did not come back (%d bytes)", len(files))
	}
	if !strings.Contains(envOut, "201") {
		t.Errorf("the guest's PUT through the route: %.400s", envOut)
	}
	if got, err := p.dav.File("airlock/reports/guest.txt"); err != nil || string(got) != "guest\n" {
		t.Errorf("the guest's PUT did not land: %q, %v", got, err)
	}
	return envOut, files
}

// assertNoSecret: the credential is in none of haystacks, no audit record
// (API and CLI), no file of the store, and not in the daemon log.
func (p *publishEnv) assertNoSecret(t *testing.T, haystacks map[string]string) {
	t.Helper()
	haystacks["daemon log"] = p.d.log()
	for _, r := range allAudit(t, p.d.client(t, tenantA), client.AuditFilter{}) {
		b, _ := json.Marshal(r)
		haystacks[fmt.Sprintf("audit record %d", r.Seq)] = string(b)
	}
	auditCLI, _, _ := p.e.cli(t, "audit", "ls", "--json", "--state-dir", p.e.stateDir)
	haystacks["airlock audit ls"] = auditCLI
	filepath.WalkDir(p.e.stateDir, func(path string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() && strings.HasPrefix(de.Name(), "airlock.db") {
			b, _ := os.ReadFile(path)
			haystacks["store file "+de.Name()] = string(b)
		}
		return nil
	})
	if _, ok := haystacks["store file airlock.db"]; !ok || !strings.Contains(auditCLI, "publish_sha256") {
		t.Error("the store file or the audit listing was not searched")
	}
	for what, text := range haystacks {
		for _, s := range p.secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s contains the DAV credential", what)
			}
		}
	}
}

// decodeB64Tail decodes the base64 blob the guest script printed last.
func decodeB64Tail(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	b, _ := base64.StdEncoding.DecodeString(lines[len(lines)-1])
	return string(b)
}

// timePublish logs the parts of a publish exec: the tool starting
// (airlock-docs version) and airlock-docs publish (its own PUT time).
func timePublish(t *testing.T, c *client.Client, tag string) {
	sbx, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: jobs.ReviewTemplate, TTLSeconds: 120, Probe: true,
		Egress: &client.EgressPolicy{Default: "deny", Allow: []client.EgressRule{{Name: "pub", Domain: "dav.internal", Credential: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sbx.Kill(ctx(t))
	if _, err := sbx.Files().Write(ctx(t), "/job/in/t.html", strings.NewReader("<html>"+tag+"</html>")); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{jobs.ToolPath, "version"},
		{jobs.ToolPath, "publish", "--url", "http://dav.internal/reports/timing.html", "--file", "/job/in/t.html"}} {
		began := time.Now()
		res, err := sbx.ExecArgv(ctx(t), argv, client.WithTimeout(time.Minute))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v: %v %+v", argv, err, res)
		}
		t.Logf("%s: exec %d ms (host side), stdout %q", argv[1], time.Since(began).Milliseconds(), strings.TrimSpace(res.Stdout[:min(len(res.Stdout), 60)]))
	}
}
