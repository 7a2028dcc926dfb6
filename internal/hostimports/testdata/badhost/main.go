// Command badhost is a host program that links the review analyser; the
// import test must refuse it.
package main

import (
	"fmt"

	"github.com/airlock-dev/airlock/internal/docs/review"
)

func main() { fmt.Println(review.StatusMatch) }
