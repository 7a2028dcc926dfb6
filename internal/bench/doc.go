// Package bench measures the platform's own costs on this host: cold boot,
// create by restore (from a warm pool and from a cold process), fork, exec
// round trip and idle memory per sandbox, all in one run so ratios compare
// like with like on a shared, noisy machine. It backs `airlock bench`.
package bench
