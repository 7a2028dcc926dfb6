// Package templates carries the template specs airlock ships (the *.yaml
// files beside this one) inside the airlock binary, so the shipped
// templates are on every template search path whatever the current
// directory and wherever the binary is installed. See README.md here for
// the spec format.
package templates

import "embed"

// Shipped holds the shipped specs, one NAME.yaml per template, at its root.
//
//go:embed *.yaml
var Shipped embed.FS
