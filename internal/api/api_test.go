package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
	"github.com/airlock-dev/airlock/internal/store"
)

type harness struct {
	t    *testing.T
	env  *apitest.Env
	be   *apitest.Recorder // the real manager (over local machines), counting upload bytes
	keyA string
	keyB string
}

func newHarness(t *testing.T, cfg api.Config) *harness {
	var be *apitest.Recorder
	env := apitest.StartLocal(t, cfg, func(m api.Backend) api.Backend { be = apitest.NewRecorder(m); return be })
	return &harness{t: t, env: env, be: be, keyA: env.Key(t, "tenant-a"), keyB: env.Key(t, "tenant-b")}
}

type resp struct {
	status int
	header http.Header
	body   []byte
	closed bool // the server asked to close the connection
}

func (r resp) code() string {
	var e wire.ErrorResponse
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (h *harness) do(method, path, key string, body any) resp {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.env.TCPURL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b, res.Close}
}

func (h *harness) create(key string, md map[string]string) string {
	h.t.Helper()
	r := h.do("POST", "/v1/sandboxes", key, map[string]any{"template": "base", "ttl_seconds": 60, "metadata": md})
	if r.status != 201 {
		h.t.Fatalf("create: %d %s", r.status, r.body)
	}
	var info struct{ ID string }
	_ = json.Unmarshal(r.body, &info)
	return info.ID
}

func wantErr(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.status != status || r.code() != code {
		t.Errorf("got %d %s, want %d %s", r.status, r.body, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
}

func TestTenantIsolation(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, map[string]string{"matter": "m1"})
	if r := h.do("PUT", "/v1/sandboxes/"+id+"/files?path=/job/in.pdf", h.keyA, "secret"); r.status != 200 {
		t.Fatalf("owner write: %d %s", r.status, r.body)
	}
	missing := "sbx-9999"
	for _, rt := range []struct{ method, path, body string }{
		{"GET", "/v1/sandboxes/%s", ""},
		{"DELETE", "/v1/sandboxes/%s", ""},
		{"POST", "/v1/sandboxes/%s/fork", `{}`},
		{"PUT", "/v1/sandboxes/%s/egress", `{"default":"deny"}`},
		{"POST", "/v1/sandboxes/%s/probe", ""},
		{"POST", "/v1/sandboxes/%s/exec", `{"cmd":"echo hi"}`},
		{"POST", "/v1/sandboxes/%s/exec/stream", `{"cmd":"echo hi"}`},
		{"PUT", "/v1/sandboxes/%s/files?path=/job/x", "data"},
		{"GET", "/v1/sandboxes/%s/files?path=/job/in.pdf", ""},
		{"DELETE", "/v1/sandboxes/%s/files?path=/job/in.pdf", ""},
		{"GET", "/v1/sandboxes/%s/files/stat?path=/job/in.pdf", ""},
		{"GET", "/v1/sandboxes/%s/files/list?path=/job", ""},
		{"POST", "/v1/sandboxes/%s/files/mkdir?path=/job/d", ""},
	} {
		foreign := h.do(rt.method, fmt.Sprintf(rt.path, id), h.keyB, rt.body)
		absent := h.do(rt.method, fmt.Sprintf(rt.path, missing), h.keyB, rt.body)
		wantErr(t, foreign, 404, "not_found")
		if foreign.status != absent.status || foreign.code() != absent.code() {
			t.Errorf("%s %s: foreign %d %s differs from missing %d %s", rt.method, rt.path, foreign.status, foreign.code(), absent.status, absent.code())
		}
	}
	r := h.do("GET", "/v1/sandboxes?state=all", h.keyB, nil)
	if r.status != 200 || strings.Contains(string(r.body), id) {
		t.Errorf("tenant B list: %d %s", r.status, r.body)
	}
	for _, q := range []string{"metadata.matter=m1", "metadata%5Bmatter%5D=m1"} { // both spellings
		r = h.do("GET", "/v1/sandboxes?"+q, h.keyA, nil)
		if !strings.Contains(string(r.body), id) {
			t.Errorf("tenant A list by metadata (%s) lacks its sandbox: %s", q, r.body)
		}
	}
	// The owner still has it, untouched.
	if r := h.do("GET", "/v1/sandboxes/"+id+"/files?path=/job/in.pdf", h.keyA, nil); string(r.body) != "secret" {
		t.Errorf("owner read after foreign attempts: %d %q", r.status, r.body)
	}
	// Audit is scoped to the key's tenant.
	ctx := context.Background()
	for _, tn := range []string{"tenant-a", "tenant-b"} {
		if _, err := h.env.Store.AppendAudit(ctx, store.AuditRecord{Tenant: tn, SandboxID: id, Event: "create", Outcome: "ok",
			Metadata: map[string]string{"matter": "m1"}}); err != nil {
			t.Fatal(err)
		}
	}
	var al wire.AuditList
	r = h.do("GET", "/v1/audit?metadata.matter=m1", h.keyB, nil)
	_ = json.Unmarshal(r.body, &al)
	if r.status != 200 || len(al.Records) != 1 || al.Records[0].Tenant != "tenant-b" {
		t.Errorf("tenant B audit: %d %s", r.status, r.body)
	}
}

func TestAuth(t *testing.T) {
	h := newHarness(t, api.Config{})
	r := h.do("GET", "/v1/sandboxes", "", nil)
	wantErr(t, r, 401, "permission_denied")
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	wantErr(t, h.do("GET", "/v1/sandboxes", "alk_nope", nil), 401, "permission_denied")
	keys, _ := h.env.Store.ListKeys(context.Background(), "tenant-b")
	if err := h.env.Store.RevokeKey(context.Background(), keys[0].ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.do("GET", "/v1/sandboxes", h.keyB, nil), 401, "permission_denied")
	for _, p := range []string{"/healthz", "/openapi.json", "/metrics"} {
		if r := h.do("GET", p, "", nil); r.status != 200 {
			t.Errorf("%s without key: %d", p, r.status)
		}
	}
}

func TestErrors(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, nil)
	big := `{"template":"base","metadata":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"malformed json", "POST", "/v1/sandboxes", `{"template":`, 400, "invalid_argument"},
		{"not an object", "POST", "/v1/sandboxes", `[1]`, 400, "invalid_argument"},
		{"unknown field", "POST", "/v1/sandboxes", `{"template":"base","tll":5}`, 400, "invalid_argument"},
		{"trailing value", "POST", "/v1/sandboxes", `{"template":"base"}{}`, 400, "invalid_argument"},
		{"body too large", "POST", "/v1/sandboxes", big, 413, "resource_exhausted"},
		{"negative ttl reaches backend", "POST", "/v1/sandboxes", `{"template":"base","ttl_seconds":-5}`, 400, "invalid_argument"},
		{"unknown template", "POST", "/v1/sandboxes", `{"template":"nope"}`, 404, "not_found"},
		{"bad egress", "POST", "/v1/sandboxes", `{"template":"base","egress":{"default":"open"}}`, 400, "invalid_argument"},
		{"unknown route", "GET", "/v1/nothing", "", 404, "not_found"},
		{"unknown route no auth", "GET", "/v2", "", 404, "not_found"},
		{"wrong method", "PATCH", "/v1/sandboxes/" + id, "", 405, "invalid_argument"},
		{"bad id", "GET", "/v1/sandboxes/ABC", "", 400, "invalid_argument"},
		{"long id", "GET", "/v1/sandboxes/" + strings.Repeat("a", 65), "", 400, "invalid_argument"},
		{"bad state", "GET", "/v1/sandboxes?state=zombie", "", 400, "invalid_argument"},
		{"unknown query", "GET", "/v1/sandboxes?meta.x=y", "", 400, "invalid_argument"},
		{"metadata key twice", "GET", "/v1/sandboxes?metadata.x=y&metadata%5Bx%5D=z", "", 400, "invalid_argument"},
		{"metadata bracket unclosed", "GET", "/v1/sandboxes?metadata%5Bx=y", "", 400, "invalid_argument"},
		{"traversal", "GET", "/v1/sandboxes/" + id + "/files?path=/job/../etc/passwd", "", 400, "invalid_argument"},
		{"relative", "GET", "/v1/sandboxes/" + id + "/files?path=job/in.pdf", "", 400, "invalid_argument"},
		{"trailing slash", "GET", "/v1/sandboxes/" + id + "/files/stat?path=/job/", "", 400, "invalid_argument"},
		{"no path", "GET", "/v1/sandboxes/" + id + "/files/stat", "", 400, "invalid_argument"},
		{"traversal upload", "PUT", "/v1/sandboxes/" + id + "/files?path=/job/../../x", "x", 400, "invalid_argument"},
		{"bad mode", "PUT", "/v1/sandboxes/" + id + "/files?path=/job/x&mode=999", "x", 400, "invalid_argument"},
		{"remove root", "DELETE", "/v1/sandboxes/" + id + "/files?path=/&recursive=true", "", 400, "invalid_argument"},
		{"missing file", "GET", "/v1/sandboxes/" + id + "/files?path=/job/none", "", 404, "not_found"},
		{"fork too many", "POST", "/v1/sandboxes/" + id + "/fork", `{"count":17}`, 400, "invalid_argument"},
		{"fork zero", "POST", "/v1/sandboxes/" + id + "/fork", `{"count":0}`, 400, "invalid_argument"},
		{"exec neither", "POST", "/v1/sandboxes/" + id + "/exec", `{}`, 400, "invalid_argument"},
		{"exec both", "POST", "/v1/sandboxes/" + id + "/exec", `{"cmd":"x","argv":["x"]}`, 400, "invalid_argument"},
		{"exec negative timeout", "POST", "/v1/sandboxes/" + id + "/exec", `{"cmd":"x","timeout_seconds":-1}`, 400, "invalid_argument"},
		{"exec relative cwd", "POST", "/v1/sandboxes/" + id + "/exec", `{"cmd":"x","cwd":"tmp"}`, 400, "invalid_argument"},
		{"exec bad env", "POST", "/v1/sandboxes/" + id + "/exec", `{"cmd":"x","env":{"A=B":"c"}}`, 400, "invalid_argument"},
		{"audit bad since", "GET", "/v1/audit?since=yesterday", "", 400, "invalid_argument"},
		{"audit bad limit", "GET", "/v1/audit?limit=0", "", 400, "invalid_argument"},
		{"unknown template get", "GET", "/v1/templates/nope", "", 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, h.do(tc.method, tc.path, h.keyA, tc.body), tc.status, tc.code)
		})
	}
	if r := h.do("PATCH", "/v1/sandboxes/"+id, h.keyA, nil); !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Errorf("405 Allow = %q", r.header.Get("Allow"))
	}
	// A killed sandbox is a failed precondition (409).
	if r := h.do("DELETE", "/v1/sandboxes/"+id, h.keyA, nil); r.status != 204 {
		t.Fatalf("kill: %d %s", r.status, r.body)
	}
	wantErr(t, h.do("DELETE", "/v1/sandboxes/"+id, h.keyA, nil), 409, "failed_precondition")
}

func TestUploadLimits(t *testing.T) {
	h := newHarness(t, api.Config{MaxUploadBytes: 1 << 20})
	id := h.create(h.keyA, nil)
	path := "/v1/sandboxes/" + id + "/files?path=/job/big"

	// Declared too large: answered from the headers alone. The raw
	// connection sends no body byte at all, so a server that tried to
	// read it would hang here rather than answer.
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.env.TCPURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", path, h.keyA, 100<<20)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to an oversized declared upload: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	wantErr(t, resp{res.StatusCode, res.Header, b, res.Close}, 413, "resource_exhausted")
	if h.be.LastWriteRead() != 0 {
		t.Errorf("backend read %d bytes of a refused upload", h.be.LastWriteRead())
	}

	// Undeclared (chunked) and too large: cut while streaming.
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for i := 0; i < 64; i++ { // 4 MiB
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	r := h.do("PUT", path, h.keyA, pr)
	pr.Close()
	wantErr(t, r, 413, "resource_exhausted")
	if h.be.LastWriteRead() > 1<<20 {
		t.Errorf("backend read %d bytes, over the limit", h.be.LastWriteRead())
	}
	// Within the limit: fine.
	if r := h.do("PUT", path+"&mode=0600", h.keyA, bytes.Repeat([]byte("y"), 1<<20)); r.status != 200 || !strings.Contains(string(r.body), `"bytes":1048576`) {
		t.Errorf("upload at the limit: %d %s", r.status, r.body)
	}
}

func TestExec(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, nil)
	exec := func(body string) wire.ExecResponse {
		t.Helper()
		r := h.do("POST", "/v1/sandboxes/"+id+"/exec", h.keyA, body)
		if r.status != 200 {
			t.Fatalf("exec %s: %d %s", body, r.status, r.body)
		}
		var out wire.ExecResponse
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := exec(`{"cmd":"echo hello"}`); out.Stdout != "hello\n" || out.ExitCode != 0 || out.StdoutBase64 != "" {
		t.Errorf("echo: %+v", out)
	}
	if out := exec(`{"argv":["echo","a","b"]}`); out.Stdout != "a b\n" {
		t.Errorf("argv: %+v", out)
	}
	if out := exec(`{"cmd":"echo boom >&2; exit 1"}`); out.ExitCode != 1 || out.Stderr != "boom\n" {
		t.Errorf("fail: %+v", out)
	}
	// Output that is not text travels as base64 only (exact, and 4/3 of
	// its size rather than up to 6x as escaped JSON).
	out := exec(`{"cmd":"printf '\\377\\376\\000A'"}`)
	raw, _ := base64.StdEncoding.DecodeString(out.StdoutBase64)
	if string(raw) != "\xff\xfe\x00A" || out.Stdout != "" {
		t.Errorf("binary: %+v", out)
	}
	// Text with everything JSON must escape survives the hand-written
	// encoder exactly.
	tricky := "quote \" backslash \\ tab \t cr \r nl \n bell \x07 del \x7f unicode é 日本 \u2028 end" + strings.Repeat(".", 64)
	stdin, _ := json.Marshal(tricky)
	if out := exec(`{"cmd":"cat","stdin":` + string(stdin) + `}`); out.Stdout != tricky || out.StdoutBase64 != "" {
		t.Errorf("escaped text: %q", out.Stdout)
	}
	if out := exec(`{"cmd":"echo $A$B","env":{"B":"2","A":"1"}}`); out.Stdout != "12\n" {
		t.Errorf("env: %q", out.Stdout)
	}
	if out := exec(`{"cmd":"cat","stdin":"in put"}`); out.Stdout != "in put" {
		t.Errorf("stdin: %q", out.Stdout)
	}
	if out := exec(`{"cmd":"cat","stdin_base64":"/wA="}`); out.Stdout != "" || out.StdoutBase64 != "/wA=" {
		t.Errorf("stdin_base64: %+v", out)
	}
	if out := exec(`{"cmd":"sleep 30","timeout_seconds":0.05}`); !out.TimedOut || out.ExitCode != 137 {
		t.Errorf("timeout: %+v", out)
	}
	if out := exec(`{"cmd":"seq 100","max_output_bytes":10}`); !out.StdoutTruncated || len(out.Stdout) != 10 {
		t.Errorf("cap: %+v", out)
	}
}

func readEvents(t *testing.T, body []byte) []wire.StreamEvent {
	t.Helper()
	var evs []wire.StreamEvent
	for _, line := range strings.SplitAfter(string(body), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			t.Fatalf("unterminated line %q", line)
		}
		var ev wire.StreamEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestExecStream(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, nil)
	r := h.do("POST", "/v1/sandboxes/"+id+"/exec/stream", h.keyA, `{"cmd":"for i in 0 1 2; do echo chunk $i; done; echo done >&2"}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("stream: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	evs := readEvents(t, r.body)
	var stdout, stderr string
	for _, ev := range evs[:len(evs)-1] {
		switch ev.Type {
		case "stdout":
			stdout += string(ev.Data)
		case "stderr":
			stderr += string(ev.Data)
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
	if stdout != "chunk 0\nchunk 1\nchunk 2\n" || stderr != "done\n" {
		t.Errorf("stream output %q %q in %d events", stdout, stderr, len(evs))
	}
	last := evs[len(evs)-1]
	if last.Type != "exit" || last.ExecStatus == nil || last.ExitCode != 0 {
		t.Errorf("last event %+v", last)
	}
	if strings.Contains(string(r.body), "chunk") {
		t.Errorf("stdout data not base64 in the wire form: %s", r.body)
	}
	if strings.Contains(strings.Split(string(r.body), "\n")[len(evs)-1], `"stdout"`) {
		t.Error("exit event carries stdout")
	}

	// A failure after output (the sandbox is killed under the command):
	// the stream ends with an error event.
	res, br := h.openStream(id, `{"cmd":"echo partial; sleep 60"}`)
	defer res.Body.Close()
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"stdout"`) {
		t.Fatalf("first event %q %v", line, err)
	}
	if r := h.do("DELETE", "/v1/sandboxes/"+id, h.keyA, nil); r.status != 204 {
		t.Fatalf("kill under a stream: %d %s", r.status, r.body)
	}
	rest, _ := io.ReadAll(br)
	evs = readEvents(t, rest)
	if len(evs) != 1 || evs[0].Type != "error" || evs[0].Error == nil || evs[0].Error.Code != "failed_precondition" {
		t.Errorf("midway error: %s", rest)
	}
	// A failure before output: a plain JSON error with its status.
	wantErr(t, h.do("POST", "/v1/sandboxes/sbx-9999/exec/stream", h.keyA, `{"cmd":"echo x"}`), 404, "not_found")
}

func TestExecStreamFlushes(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, nil)
	// The first event of a command that then runs for a minute arrives
	// while it runs: the stream is flushed per event.
	res, br := h.openStream(id, `{"cmd":"echo first; sleep 60"}`)
	defer res.Body.Close()
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"stdout"`) {
		t.Fatalf("first line %q %v", line, err)
	}
}

// openStream starts an exec stream in sandbox id and returns the response
// to read event by event.
func (h *harness) openStream(id, body string) (*http.Response, *bufio.Reader) {
	h.t.Helper()
	req, _ := http.NewRequest("POST", h.env.TCPURL+"/v1/sandboxes/"+id+"/exec/stream", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+h.keyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		h.t.Fatalf("stream: %d %s", res.StatusCode, b)
	}
	return res, bufio.NewReader(res.Body)
}

func TestFiles(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, nil)
	base := "/v1/sandboxes/" + id + "/files"
	if r := h.do("PUT", base+"?path=/job/a/b.txt", h.keyA, "content"); r.status != 200 || !strings.Contains(string(r.body), `"bytes":7`) {
		t.Fatalf("write: %d %s", r.status, r.body)
	}
	r := h.do("GET", base+"?path=/job/a/b.txt", h.keyA, nil)
	if r.status != 200 || string(r.body) != "content" || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("read: %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	var fi wire.FileInfo
	r = h.do("GET", base+"/stat?path=/job/a/b.txt", h.keyA, nil)
	_ = json.Unmarshal(r.body, &fi)
	if fi.Size != 7 || fi.IsDir || fi.Name != "b.txt" || fi.ModeString != "-rw-r--r--" {
		t.Errorf("stat: %s", r.body)
	}
	var fl wire.FileList
	r = h.do("GET", base+"/list?path=/job/a", h.keyA, nil)
	_ = json.Unmarshal(r.body, &fl)
	if len(fl.Entries) != 1 || fl.Entries[0].Path != "/job/a/b.txt" {
		t.Errorf("list: %s", r.body)
	}
	if r := h.do("POST", base+"/mkdir?path=/job/out/x", h.keyA, nil); r.status != 204 {
		t.Errorf("mkdir: %d %s", r.status, r.body)
	}
	wantErr(t, h.do("DELETE", base+"?path=/job", h.keyA, nil), 409, "failed_precondition")
	if r := h.do("DELETE", base+"?path=/job&recursive=true", h.keyA, nil); r.status != 204 {
		t.Errorf("remove: %d %s", r.status, r.body)
	}
	wantErr(t, h.do("GET", base+"/stat?path=/job/a/b.txt", h.keyA, nil), 404, "not_found")

	// A read over the limit fails before the first byte: a JSON error.
	h2 := newHarness(t, api.Config{MaxReadBytes: 4})
	id2 := h2.create(h2.keyA, nil)
	h2.do("PUT", "/v1/sandboxes/"+id2+"/files?path=/big", h2.keyA, "12345")
	wantErr(t, h2.do("GET", "/v1/sandboxes/"+id2+"/files?path=/big", h2.keyA, nil), 429, "resource_exhausted")
}

func TestSandboxLifecycle(t *testing.T) {
	h := newHarness(t, api.Config{})
	// An allow rule on a host without sandbox networking is refused, and
	// says what would enable it; a malformed policy is invalid either way.
	r := h.do("POST", "/v1/sandboxes", h.keyA, `{"template":"base","ttl_seconds":30,"metadata":{"doc":"d1"},
		"egress":{"default":"deny","allow":[{"name":"dms","cidr":"10.250.0.2/32","protocol":"tcp","ports":[8080]}]}}`)
	wantErr(t, r, 409, "failed_precondition")
	if !strings.Contains(string(r.body), "serve --net") {
		t.Errorf("refusal should name serve --net: %s", r.body)
	}
	wantErr(t, h.do("POST", "/v1/sandboxes", h.keyA, `{"template":"base","egress":{"default":"deny","allow":[{"name":"x","cidr":"10.0.0.0/33"}]}}`),
		400, "invalid_argument")
	r = h.do("POST", "/v1/sandboxes", h.keyA, `{"template":"base","ttl_seconds":30,"metadata":{"doc":"d1"},"egress":{"default":"deny"}}`)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var info wire.Sandbox
	_ = json.Unmarshal(r.body, &info)
	if info.Tenant != "tenant-a" || info.Metadata["doc"] != "d1" || info.Egress.Default != "deny" || len(info.Egress.Allow) != 0 {
		t.Errorf("create info: %s", r.body)
	}
	r = h.do("POST", "/v1/sandboxes/"+info.ID+"/fork", h.keyA, `{"count":2}`)
	var list wire.SandboxList
	_ = json.Unmarshal(r.body, &list)
	if r.status != 201 || len(list.Sandboxes) != 2 || list.Sandboxes[0].ParentID != info.ID {
		t.Errorf("fork: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/sandboxes/"+info.ID+"/fork", h.keyA, nil); r.status != 201 || strings.Count(string(r.body), `"id"`) != 1 {
		t.Errorf("fork default count: %d %s", r.status, r.body)
	}
	r = h.do("PUT", "/v1/sandboxes/"+info.ID+"/egress", h.keyA, `{"default":"deny","allow":[]}`)
	if r.status != 200 {
		t.Errorf("egress: %d %s", r.status, r.body)
	}
	wantErr(t, h.do("PUT", "/v1/sandboxes/"+info.ID+"/egress", h.keyA, `{"default":"allow"}`), 409, "failed_precondition")
	r = h.do("POST", "/v1/sandboxes/"+info.ID+"/probe", h.keyA, nil)
	var pr wire.ProbeResponse
	_ = json.Unmarshal(r.body, &pr)
	if r.status != 200 || !pr.OK || len(pr.Probes) == 0 {
		t.Errorf("probe under deny-all: %d %s", r.status, r.body)
	}
	r = h.do("GET", "/v1/templates", h.keyA, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"name":"base"`) {
		t.Errorf("templates: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/v1/templates/base", h.keyA, nil); r.status != 200 {
		t.Errorf("template: %d %s", r.status, r.body)
	}
}

func TestMetricsServed(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.create(h.keyA, nil)
	h.do("GET", "/v1/nothing", h.keyA, nil)
	r := h.do("GET", "/metrics", "", nil)
	for _, want := range []string{
		`airlock_http_requests_total{code="201",route="POST /v1/sandboxes"} 1`,
		`airlock_http_requests_total{code="404",route="unmatched"} 1`,
		`airlock_errors_total{class="not_found"} 1`,
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	h := newHarness(t, api.Config{})
	r := h.do("GET", "/openapi.json", "", nil)
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil || doc["openapi"] == nil {
		t.Errorf("openapi.json: %v %.100s", err, r.body)
	}
}

func TestUnixSocket(t *testing.T) {
	h := newHarness(t, api.Config{})
	fi, err := os.Stat(h.env.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode %v, want 0660", fi.Mode().Perm())
	}
	c := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", h.env.Socket)
	}}}
	res, err := c.Get("http://airlock/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("healthz over unix: %d", res.StatusCode)
	}
	// A live socket is not taken over.
	if _, err := api.ListenUnix(h.env.Socket, -1); err == nil {
		t.Error("ListenUnix took over a live socket")
	}
}

func TestListenUnixStale(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // leaves a dead socket file behind
	l2, err := api.ListenUnix(sock, -1)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	l2.Close()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := api.ListenUnix(file, -1); err == nil {
		t.Error("ListenUnix removed a regular file")
	}
}

// TestPlainExecsPerTenant: a tenant holds at most 8 non-streaming execs
// (each buffers its output on the host); the 9th is refused with 429,
// other tenants are not affected, and slots come back when execs end.
func TestPlainExecsPerTenant(t *testing.T) {
	h := newHarness(t, api.Config{})
	idA := h.create(h.keyA, nil)
	idB := h.create(h.keyB, nil)
	h.do("POST", "/v1/sandboxes/"+idA+"/files/mkdir?path=/held", h.keyA, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each marks that it runs (so holds its slot), then is held
			// until cancelled: the request's end kills the command. Paths
			// are relative: a local machine's commands run in its root.
			req, _ := http.NewRequestWithContext(ctx, "POST", h.env.TCPURL+"/v1/sandboxes/"+idA+"/exec",
				strings.NewReader(fmt.Sprintf(`{"cmd":"touch ./held/%d && sleep 600"}`, i)))
			req.Header.Set("Authorization", "Bearer "+h.keyA)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}()
	}
	h.untilFiles(h.keyA, idA, "/held", 8)
	wantErr(t, h.do("POST", "/v1/sandboxes/"+idA+"/exec", h.keyA, `{"cmd":"echo x"}`), 429, "resource_exhausted")
	if r := h.do("POST", "/v1/sandboxes/"+idB+"/exec", h.keyB, `{"cmd":"echo x"}`); r.status != 200 {
		t.Errorf("another tenant's exec: %d %s", r.status, r.body)
	}
	cancel()
	wg.Wait()
	h.untilServed("POST", "/v1/sandboxes/"+idA+"/exec", h.keyA, `{"cmd":"echo x"}`)
}

// untilFiles waits until directory dir of sandbox id holds n entries. It
// asks the backend itself, so the answer does not wait on the API's
// admission, which a test may have filled on purpose.
func (h *harness) untilFiles(key, id, dir string, n int) {
	h.t.Helper()
	tenant := map[string]string{h.keyA: "tenant-a", h.keyB: "tenant-b"}[key]
	deadline := time.Now().Add(time.Minute)
	for {
		fs, err := h.be.ListFiles(context.Background(), tenant, id, dir)
		if err == nil && len(fs) == n {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s holds %d entries, want %d (err %v)", dir, len(fs), n, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestExecTimeoutResolution(t *testing.T) {
	h := newHarness(t, api.Config{})
	id := h.create(h.keyA, nil)
	r := h.do("POST", "/v1/sandboxes/"+id+"/exec", h.keyA, `{"cmd":"sleep 30","timeout_seconds":1e-10}`)
	wantErr(t, r, 400, "invalid_argument")
	if r := h.do("POST", "/v1/sandboxes/"+id+"/exec", h.keyA, `{"cmd":"sleep 30","timeout_seconds":0.001}`); r.status != 200 ||
		!strings.Contains(string(r.body), `"timed_out":true`) {
		t.Errorf("a 1 ms timeout: %d %s", r.status, r.body)
	}
}

// GET /v1/keys lists the caller's tenant's keys only, marks the one in
// use, shows revoked ones, and never a key itself.
func TestListKeys(t *testing.T) {
	h := newHarness(t, api.Config{})
	second := h.env.Key(t, "tenant-a")
	ks, _ := h.env.Store.ListKeys(context.Background(), "tenant-a")
	if err := h.env.Store.RevokeKey(context.Background(), ks[0].ID); err != nil { // keyA
		t.Fatal(err)
	}
	r := h.do("GET", "/v1/keys", second, nil)
	if r.status != 200 {
		t.Fatalf("list keys: %d %s", r.status, r.body)
	}
	var got wire.KeyList
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != 2 {
		t.Fatalf("tenant-a sees %d keys, want its 2: %s", len(got.Keys), r.body)
	}
	for _, k := range got.Keys {
		if k.Tenant != "tenant-a" {
			t.Errorf("tenant-a sees a key of %s", k.Tenant)
		}
		if k.Current != (k.ID != ks[0].ID) || (k.RevokedAt != nil) != (k.ID == ks[0].ID) {
			t.Errorf("key %+v: want the revoked one not current, the other current", k)
		}
	}
	if bytes.Contains(r.body, []byte(second)) || bytes.Contains(r.body, []byte(h.keyA)) {
		t.Fatal("the key list holds a key")
	}
	if r := h.do("GET", "/v1/keys", h.keyB, nil); !bytes.Contains(r.body, []byte(`"tenant":"tenant-b"`)) || bytes.Contains(r.body, []byte("tenant-a")) {
		t.Fatalf("tenant-b's list: %s", r.body)
	}
	wantErr(t, h.do("GET", "/v1/keys", h.keyA, nil), 401, "permission_denied") // revoked
}

// A tenant's audit records are numbered among its own records: its first
// is seq 1 however much other tenants did, and after_seq pages in that
// numbering. The global seq would tell one tenant the others' volume.
func TestAuditSeqIsPerTenant(t *testing.T) {
	h := newHarness(t, api.Config{})
	ctx := context.Background()
	for i := 0; i < 20; i++ { // another tenant's busy morning
		if _, err := h.env.Store.AppendAudit(ctx, store.AuditRecord{Tenant: "tenant-a", Event: "exec", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := h.env.Store.AppendAudit(ctx, store.AuditRecord{Tenant: "tenant-b", Event: "exec", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	var page wire.AuditList
	r := h.do("GET", "/v1/audit?limit=2", h.keyB, nil)
	if err := json.Unmarshal(r.body, &page); err != nil || r.status != 200 || len(page.Records) != 2 ||
		page.Records[0].Seq != 1 || page.Records[1].Seq != 2 || page.NextAfterSeq != 2 {
		t.Fatalf("tenant B's first page: %d %s", r.status, r.body)
	}
	page = wire.AuditList{}
	r = h.do("GET", "/v1/audit?limit=2&after_seq=2", h.keyB, nil)
	if err := json.Unmarshal(r.body, &page); err != nil || len(page.Records) != 1 || page.Records[0].Seq != 3 || page.NextAfterSeq != 0 {
		t.Fatalf("tenant B's second page: %d %s", r.status, r.body)
	}
}
