package blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Store holds blobs by digest (lower-case hex SHA-256).
type Store interface {
	// Stat returns the blob's size; NotFound when absent.
	Stat(ctx context.Context, digest string) (int64, error)
	// Get opens the blob for reading with its size; NotFound when
	// absent. The caller verifies what it reads.
	Get(ctx context.Context, digest string) (io.ReadCloser, int64, error)
	// Put stores size bytes of r as digest; the store refuses a body
	// that does not hash to digest (InvalidArgument). A blob appears
	// complete or not at all.
	Put(ctx context.Context, digest string, r io.Reader, size int64) error
}

var digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidDigest reports an InvalidArgument unless d is lower-case hex
// SHA-256.
func ValidDigest(d string) error {
	if !digestRE.MatchString(d) {
		return errdefs.InvalidArgument("blob digest %q is not a lower-case hex sha256", d)
	}
	return nil
}

// Key is where a blob lives inside a store: sha256/<hex>.
func Key(digest string) string { return "sha256/" + digest }

// Open returns the store at rawURL: file:///DIR or http(s)://HOST/PREFIX.
// token is sent with an HTTP store's PUTs (and ignored by a file store).
func Open(rawURL, token string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errdefs.InvalidArgument("blob store URL %q: %v", rawURL, err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" || !strings.HasPrefix(u.Path, "/") {
			return nil, errdefs.InvalidArgument("blob store URL %q: want file:///ABSOLUTE/DIR", rawURL)
		}
		return NewDir(u.Path)
	case "http", "https":
		if u.Host == "" {
			return nil, errdefs.InvalidArgument("blob store URL %q: no host", rawURL)
		}
		return NewHTTP(strings.TrimSuffix(rawURL, "/"), token), nil
	}
	return nil, errdefs.InvalidArgument("blob store URL %q: want file://, http:// or https://", rawURL)
}

// Upload puts the file at path into s unless s holds it already. It
// returns the file's digest and how many bytes it sent (0 when present).
func Upload(ctx context.Context, s Store, path string) (digest string, sent int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("upload: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("upload: hash %s: %w", path, err)
	}
	digest = hex.EncodeToString(h.Sum(nil))
	if have, err := s.Stat(ctx, digest); err == nil && have == size {
		return digest, 0, nil
	} else if err != nil && !errdefs.IsNotFound(err) {
		return "", 0, fmt.Errorf("upload %s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", 0, fmt.Errorf("upload: %w", err)
	}
	if err := s.Put(ctx, digest, f, size); err != nil {
		return "", 0, fmt.Errorf("upload %s: %w", path, err)
	}
	return digest, size, nil
}
