package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Codes of a failed publish, stable for scripts (an NDJSON line's
// error.code).
const (
	// CodeRefused: the sandbox could not be given the publish host (it is
	// not one of the tenant's credential routes, or the daemon has no
	// networking); nothing left the host.
	CodeRefused = "publish_refused"
	// CodeFailed: the PUT did not succeed (the server's status, or the
	// connection failed).
	CodeFailed = "publish_failed"
)

// Target is a parsed --publish URL: the collection outputs are put in.
type Target struct {
	Host string // the credential route's in-guest host, lower case
	Path string // the collection path, starting and ending with "/"
}

// Parse checks a --publish URL: http://HOST[/PATH/]. http because the
// guest talks plain HTTP to the proxy, which alone speaks HTTPS to the
// server (with the credential); user info is refused because a secret in
// a URL would enter the guest.
func Parse(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the input, which may hold a password.
		return Target{}, errdefs.InvalidArgument("--publish: not a URL")
	}
	bad := func(why string) (Target, error) {
		return Target{}, errdefs.InvalidArgument("--publish %q: %s", u.Redacted(), why)
	}
	switch {
	case u.Scheme != "http":
		return bad("want http://HOST/PATH/ (HOST is a credential route: the egress proxy speaks HTTPS to the server)")
	case u.User != nil:
		return bad("user info is refused: the credential belongs in the daemon's --credentials file, never in the guest")
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return bad("no query or fragment")
	case u.Port() != "" && u.Port() != "80":
		return bad("no port (the route decides where the server is)")
	case u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil || strings.Contains(u.Hostname(), "*"):
		return bad("the host must be a credential route's name")
	}
	p := u.EscapedPath()
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if strings.Contains(p, "/../") || strings.Contains(p, "/./") {
		return bad("no . or .. segments")
	}
	return Target{Host: strings.ToLower(u.Hostname()), Path: p}, nil
}

// URL is where a file called name goes (name is a file name, escaped
// here).
func (t Target) URL(name string) string {
	return "http://" + t.Host + t.Path + url.PathEscape(name)
}

// Labels are the publish sandbox's metadata, and so every audit record
// about it: the document's and the published file's SHA-256 and the host.
func Labels(docSHA256, fileSHA256, host string) map[string]string {
	return map[string]string{"job": "publish", "doc_sha256": docSHA256, "publish_sha256": fileSHA256, "publish_host": host}
}

// SHA256 is data's hex digest.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// maxReply bounds what is read of the server's answer (an error page).
const maxReply = 4 << 10

// Put PUTs the file at path to rawURL (guest side). The request goes
// where the guest's DNS says, which is the egress proxy: never through an
// HTTP_PROXY from the environment. A status other than 2xx is an error
// naming it.
func Put(ctx context.Context, rawURL, path string, timeout time.Duration) (status int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, rawURL, f)
	if err != nil {
		return 0, err
	}
	req.ContentLength = fi.Size()
	req.Header.Set("Content-Type", contentType(path))
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("PUT %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("PUT %s: %s: %s", rawURL, resp.Status, firstLine(string(reply)))
	}
	return resp.StatusCode, nil
}

func contentType(path string) string {
	switch {
	case strings.HasSuffix(path, ".html"):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(path, ".md"):
		return "text/markdown; charset=utf-8"
	}
	return "application/octet-stream"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
