package reviewcorpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteContract writes a contract's flow, paragraphs and truth as
// NAME.flow.json, NAME.paragraphs.json and NAME.truth.json under dir.
func WriteContract(dir string, c *Contract) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	for _, f := range []struct {
		suffix string
		v      any
	}{
		{".flow.json", c.Flow},
		{".paragraphs.json", c.Paragraphs},
		{".truth.json", c.Truth},
	} {
		b, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return fmt.Errorf("corpus: %s%s: %w", c.Name, f.suffix, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+f.suffix), append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
	}
	return nil
}
