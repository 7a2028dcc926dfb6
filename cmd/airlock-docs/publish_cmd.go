package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/airlock-dev/airlock/internal/publish"
)

// publishCommand PUTs one file the host wrote into the guest (a rendered
// report) to the publish URL: a credential route's host, which the egress
// proxy forwards with the credential the guest never sees. It writes no
// envelope: exit 0 when the server answered 2xx (printing the status and
// the request's milliseconds), 1 otherwise (the reason on stderr), 2 on
// usage errors.
func publishCommand() command {
	var rawURL, file string
	var timeout time.Duration
	return command{
		name:    "publish",
		summary: "PUT a file to the publish URL (a credential route, through the egress proxy)",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&rawURL, "url", "", "where to PUT the file: http://ROUTE-HOST/PATH/NAME (required)")
			fs.StringVar(&file, "file", "", "the file to PUT (required)")
			fs.DurationVar(&timeout, "timeout", 2*time.Minute, "time limit of the request")
		},
		direct: func(ctx context.Context, inv *invocation, stderr io.Writer) int {
			if rawURL == "" || file == "" || timeout <= 0 {
				fmt.Fprintln(stderr, "airlock-docs publish: --url and --file are required, --timeout positive")
				return exitUsage
			}
			began := time.Now()
			status, err := publish.Put(ctx, rawURL, file, timeout)
			if err != nil {
				fmt.Fprintf(stderr, "airlock-docs publish: %v\n", err)
				return exitNoResult
			}
			// The status and the PUT's own time in ms (name lookup, connect,
			// request, answer), apart from this process's start.
			fmt.Fprintf(inv.stdout, "%d %d\n", status, time.Since(began).Milliseconds())
			return exitResult
		},
	}
}
