package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/airlock-dev/airlock/internal/docs"
)

// interrupted classifies a context error: a deadline is the job's time
// limit (timeout); a cancellation is the job being stopped, which is not
// the document's fault (internal).
func interrupted(err error, during string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return docs.Errorf(docs.CodeTimeout, "extraction ran past its time limit during %s", during)
	}
	return fmt.Errorf("extraction stopped during %s: %w", during, err)
}

func unreadable(format string, args ...any) error {
	return docs.Errorf(docs.CodeUnreadable, format, args...)
}

func tooLarge(format string, args ...any) error {
	return docs.Errorf(docs.CodeTooLarge, format, args...)
}
