package api

import "github.com/airlock-dev/airlock/internal/sandbox"

// MaxForkCount bounds one fork request: the sandbox manager's limit.
const MaxForkCount = sandbox.MaxForkCount

// ProcessOutputKeep is how many of the latest bytes of each stream of a
// background process the server keeps.
const ProcessOutputKeep = sandbox.ProcessOutputKeep
