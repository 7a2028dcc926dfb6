// Package storetest is the behaviour both state stores share, as one
// suite of cases: API keys, the audit log's query, filters and paging
// (with each tenant's own numbering), and invoice history. The
// single-host store (internal/store) and the cluster's
// (internal/cluster/pgstore) run the same cases from their tests, so a
// difference between them is a failing test, not a surprise in
// production.
//
// It owns the cases and nothing else: each store's tests make the
// subject. What it must never do: be imported by anything but tests, or
// assume what differs by design between the stores (Seq is a chain
// position on one host and a global paging number in a cluster; only its
// order and paging are shared).
package storetest
