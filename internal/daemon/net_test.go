package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestLoadCredentials(t *testing.T) {
	const secret = "sk-never-echo-this"
	write := func(body string, mode os.FileMode) string {
		p := filepath.Join(t.TempDir(), "creds.json")
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"acme":[{"name":"llm","host":"llm.internal","upstream":"https://api.example.com/v1","header":"Authorization","value":"Bearer ` + secret + `"}]}`
	got, err := loadCredentials(write(good, 0o600))
	if err != nil || len(got["acme"]) != 1 || got["acme"][0].Value != "Bearer "+secret || got["acme"][0].Host != "llm.internal" {
		t.Fatalf("good file: %v %+v", err, got)
	}
	if _, err := loadCredentials(write(good, 0o644)); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("world-readable file: %v, want failed_precondition", err)
	}
	for name, body := range map[string]string{
		"http upstream": strings.Replace(good, "https://", "http://", 1),
		"unknown field": strings.Replace(good, `"name"`, `"nom"`, 1),
		"no header":     strings.Replace(good, `"Authorization"`, `""`, 1),
	} {
		_, err := loadCredentials(write(body, 0o600))
		if !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error quotes the secret: %v", name, err)
		}
	}
}
