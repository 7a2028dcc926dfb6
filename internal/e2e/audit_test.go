package e2e

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/airlock-dev/airlock/client"
)

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func testAudit(t *testing.T, d *daemon) {
	c := d.client(t, tenantA)
	matter := uniq("matter")
	// Markers that must never reach the audit log or the daemon's log.
	cmdMarker := "cmdmarker" + randHex(8)
	contentMarker := "contentmarker" + randHex(8)
	pathMarker := "pathmarker" + randHex(8)
	cmd := "echo " + cmdMarker + " >/dev/null"
	path := "/job/" + pathMarker + "/doc.txt"
	content := "privileged document " + contentMarker + "\n"

	sbx := createSandbox(t, c, 300, map[string]string{"matter": matter, "doc": "d-1"})
	if res, err := sbx.Exec(ctx(t), cmd); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	if _, err := sbx.Files().Write(ctx(t), path, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	if b, err := sbx.Files().ReadAll(ctx(t), path); err != nil || string(b) != content {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := sbx.SetEgress(ctx(t), client.DenyAll()); err != nil {
		t.Fatal(err)
	}
	kids, err := sbx.Fork(ctx(t), 1)
	if err != nil || len(kids) != 1 {
		t.Fatalf("fork: %v, %v", kids, err)
	}
	child := kids[0]
	if err := sbx.Kill(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := child.Kill(ctx(t)); err != nil {
		t.Fatal(err)
	}

	recs := allAudit(t, c, client.AuditFilter{SandboxID: sbx.ID})
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
		if r.Outcome != "ok" || r.Tenant != tenantA || r.SandboxID != sbx.ID || r.Template != templateName ||
			r.Metadata["matter"] != matter || r.Metadata["doc"] != "d-1" {
			t.Errorf("record %d: %+v", r.Seq, r)
		}
		switch r.Event {
		case "exec":
			if r.ExitCode == nil || *r.ExitCode != 0 {
				t.Errorf("exec record without exit code 0: %+v", r)
			}
		case "file_write", "file_read":
			if r.Bytes != int64(len(content)) || len(r.Detail["path_hmac"]) == 0 {
				t.Errorf("%s record: bytes %d (want %d), detail %v", r.Event, r.Bytes, len(content), r.Detail)
			}
		}
	}
	want := []string{"create", "exec", "file_write", "file_read", "egress_change", "fork", "kill"}
	if !slices.Equal(events, want) {
		t.Fatalf("audit events for %s = %v, want %v", sbx.ID, events, want)
	}
	var childEvents []string
	for _, r := range allAudit(t, c, client.AuditFilter{SandboxID: child.ID}) {
		childEvents = append(childEvents, r.Event)
		if r.ParentID != "" && r.ParentID != sbx.ID {
			t.Errorf("child record %d names parent %q", r.Seq, r.ParentID)
		}
	}
	if !slices.Equal(childEvents, []string{"create", "kill"}) {
		t.Errorf("audit events for the child = %v, want [create kill]", childEvents)
	}
	var execSeq int64
	for _, r := range recs {
		if r.Event == "exec" {
			execSeq = r.Seq
		}
	}

	// No record, through the API or the CLI (every tenant), and no daemon
	// log line holds the command, the content or the path.
	var haystacks []struct{ what, text string }
	for _, r := range allAudit(t, c, client.AuditFilter{}) {
		b, _ := json.Marshal(r)
		haystacks = append(haystacks, struct{ what, text string }{fmt.Sprintf("API audit record %d", r.Seq), string(b)})
	}
	out, stderr, code := d.env.cli(t, "audit", "ls", "--json", "--state-dir", d.env.stateDir)
	if code != 0 {
		t.Fatalf("airlock audit ls: exit %d: %s", code, stderr)
	}
	haystacks = append(haystacks, struct{ what, text string }{"airlock audit ls --json", out},
		struct{ what, text string }{"daemon log", d.log()})
	if !strings.Contains(out, sbx.ID) {
		t.Errorf("airlock audit ls --json does not mention %s", sbx.ID)
	}
	for _, h := range haystacks {
		for _, m := range []struct{ name, s string }{{"command", cmdMarker}, {"file content", contentMarker}, {"file path", pathMarker}} {
			if strings.Contains(h.text, m.s) {
				t.Errorf("%s contains the %s", h.what, m.name)
			}
		}
	}

	// The chain verifies; a copy with one record changed does not, and the
	// report names that record.
	out, stderr, code = d.env.cli(t, "audit", "verify", "--state-dir", d.env.stateDir)
	if code != 0 || !strings.Contains(out, "audit chain ok") {
		t.Fatalf("airlock audit verify: exit %d\n%s%s", code, out, stderr)
	}
	tampered := t.TempDir()
	tamperCopy(t, filepath.Join(d.env.stateDir, "airlock.db"), filepath.Join(tampered, "airlock.db"), execSeq)
	out, stderr, code = d.env.cli(t, "audit", "verify", "--state-dir", tampered)
	if code == 0 {
		t.Fatalf("airlock audit verify of a tampered log exited 0:\n%s%s", out, stderr)
	}
	if !regexp.MustCompile(fmt.Sprintf(`\brecord %d\b`, execSeq)).MatchString(stderr + out) {
		t.Fatalf("airlock audit verify did not name record %d:\n%s%s", execSeq, out, stderr)
	}
	t.Logf("tampered verify (exit %d): %s", code, strings.TrimSpace(stderr))
	if out, stderr, code = d.env.cli(t, "audit", "verify", "--json", "--state-dir", tampered); code == 0 || !strings.Contains(out, fmt.Sprintf(`"first_bad_seq": %d`, execSeq)) {
		t.Errorf("airlock audit verify --json of a tampered log: exit %d\n%s%s", code, out, stderr)
	}
}

// tamperCopy takes a consistent copy of the live store (VACUUM INTO, so the
// running daemon is not disturbed), drops the append-only trigger on the
// copy, and rewrites the exit code of record seq, as an attacker with write
// access to the file could.
func tamperCopy(t *testing.T, src, dst string, seq int64) {
	t.Helper()
	db, err := sql.Open("sqlite", src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`VACUUM INTO ?`, dst); err != nil {
		t.Fatalf("copy store: %v", err)
	}
	cp, err := sql.Open("sqlite", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if _, err := cp.Exec(`UPDATE audit SET exit_code = 1 WHERE seq = ?`, seq); err == nil {
		t.Fatal("the audit table accepted an UPDATE with its triggers in place")
	}
	if _, err := cp.Exec(`DROP TRIGGER audit_no_update`); err != nil {
		t.Fatal(err)
	}
	res, err := cp.Exec(`UPDATE audit SET exit_code = 1 WHERE seq = ?`, seq)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tamper changed %d rows", n)
	}
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dst); err != nil {
		t.Fatal(err)
	}
}
