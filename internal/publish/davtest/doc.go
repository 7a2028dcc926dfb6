// Package davtest runs a real WebDAV server for tests: Debian's nginx
// (its http_dav_module) with PUT and MKCOL, optional HTTP Basic auth (an
// htpasswd made by openssl passwd -apr1) and optional TLS, each instance
// with its own prefix, configuration, logs, pid file and document root
// under the test's temporary directory, on an address the test chooses
// (loopback, or inside a network namespace the test made). It is stopped
// when the test ends.
//
// Without nginx or openssl the test is skipped, or failed when
// AIRLOCK_REQUIRE_NGINX=1 (scripts/test.sh sets it: setup.sh installs
// both).
package davtest
