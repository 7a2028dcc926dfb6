package image

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DefaultCacheDir is where downloads and built images live unless
// AIRLOCK_CACHE_DIR says otherwise: /var/cache/airlock for root, the user
// cache directory otherwise.
func DefaultCacheDir() string {
	if d := os.Getenv("AIRLOCK_CACHE_DIR"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/airlock"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "airlock")
	}
	return filepath.Join(os.TempDir(), "airlock-cache")
}

// Progress receives human-readable progress lines for long operations.
// A nil Progress is silent.
type Progress func(format string, args ...any)

func (p Progress) Say(format string, args ...any) {
	if p != nil {
		p(format, args...)
	}
}

// FileSHA256 returns the hex sha256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// KeyOf hashes its parts into a short cache key. Parts are length-prefixed
// so ("ab","c") and ("a","bc") differ.
func KeyOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// publish renames a finished temporary file or directory into its cache
// path. If another builder won the race, its result is kept and ours is
// discarded: both were built from the same inputs.
func publish(tmp, final string) error {
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr == nil {
			os.RemoveAll(tmp)
			return nil
		}
		return fmt.Errorf("publish %s: %w", final, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
