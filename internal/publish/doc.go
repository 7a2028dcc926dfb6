// Package publish puts a job's outputs (a review's HTML report) on one
// pre-authorised location: a WebDAV collection the tenant reaches through
// a credential route of the egress proxy.
//
// The flow. The host renders the output from the validated result and
// writes it into a fresh sandbox whose only egress is the route's in-guest
// host (a rule marked credential: a host that is no route of the tenant's
// refuses the sandbox, so a wrong --publish fails closed). In the guest,
// airlock-docs publish PUTs the file to http://HOST/PATH/NAME; the proxy
// forwards it over HTTPS to the route's upstream and sets the credential
// header (HTTP Basic for a DAV server). The guest never holds the secret.
//
// What it owns: the publish URL's rules (Parse: plain http, a host name,
// no user info, query or fragment) and the guest side's PUT (Put). The
// host side's sandbox choreography is in package jobs (Publisher).
//
// Audit. The publish sandbox is labelled with the document's SHA-256, the
// published file's SHA-256 and the URL's host (Labels), so every audit
// record about it (create, file write, exec, the proxy's egress record of
// the PUT with its status and byte counts) names them. Never the content,
// never the path under the host, never the credential.
package publish
