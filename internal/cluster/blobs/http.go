package blobs

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// HTTP is a Store over plain GET, HEAD and PUT of BASE/sha256/<hex>.
type HTTP struct {
	base   string // immutable, no trailing slash
	token  string // immutable: sent with PUT
	Client *http.Client
}

// NewHTTP returns the store at base (http(s)://HOST/PREFIX).
func NewHTTP(base, token string) *HTTP {
	return &HTTP{base: base, token: token, Client: http.DefaultClient}
}

func (s *HTTP) do(ctx context.Context, method, digest string, body io.Reader, size int64) (*http.Response, error) {
	if err := ValidDigest(digest); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+"/"+Key(digest), body)
	if err != nil {
		return nil, err
	}
	if method == http.MethodPut {
		req.ContentLength = size
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
	}
	res, err := s.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errdefs.Unavailable("blob store %s unreachable", s.base), err)
	}
	if res.StatusCode/100 == 2 {
		return res, nil
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	code := errdefs.FromCode(errdefs.CodeForHTTPStatus(res.StatusCode))
	return nil, errdefs.New(code, "blob store: %s %s: %s %s", method, Key(digest), res.Status, strings.TrimSpace(string(msg)))
}

// Stat implements Store (HEAD).
func (s *HTTP) Stat(ctx context.Context, digest string) (int64, error) {
	res, err := s.do(ctx, http.MethodHead, digest, nil, 0)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.ContentLength, nil
}

// Get implements Store. The size is the server's Content-Length (-1 if
// it sent none).
func (s *HTTP) Get(ctx context.Context, digest string) (io.ReadCloser, int64, error) {
	res, err := s.do(ctx, http.MethodGet, digest, nil, 0)
	if err != nil {
		return nil, 0, err
	}
	return res.Body, res.ContentLength, nil
}

// Put implements Store.
func (s *HTTP) Put(ctx context.Context, digest string, r io.Reader, size int64) error {
	res, err := s.do(ctx, http.MethodPut, digest, io.NopCloser(r), size)
	if err != nil {
		return err
	}
	res.Body.Close()
	return nil
}

// Handler serves dir over HTTP: GET and HEAD of /sha256/<hex> to anyone
// (blobs are checked against their digests by whoever reads them), PUT
// only with "Authorization: Bearer token" (an empty token refuses every
// PUT). A PUT of a blob already present is answered at once.
func Handler(dir *Dir, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		digest, ok := strings.CutPrefix(r.URL.Path, "/sha256/")
		if !ok || ValidDigest(digest) != nil {
			http.Error(w, "want /sha256/<hex>", http.StatusNotFound)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			p, _ := dir.path(digest)
			http.ServeFile(w, r, p)
		case http.MethodPut:
			if token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
				http.Error(w, "a PUT needs the store's token", http.StatusUnauthorized)
				return
			}
			if r.ContentLength < 0 {
				http.Error(w, "a PUT needs Content-Length", http.StatusLengthRequired)
				return
			}
			if have, err := dir.Stat(r.Context(), digest); err == nil && have == r.ContentLength {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			if err := dir.Put(r.Context(), digest, r.Body, r.ContentLength); err != nil {
				http.Error(w, err.Error(), errdefs.HTTPStatus(errdefs.Class(err)))
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(0))
			w.WriteHeader(http.StatusCreated)
		default:
			w.Header().Set("Allow", "GET, HEAD, PUT")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}
