//go:build linux

package netpooltest

import "github.com/google/nftables"

// deleteHostTable removes a dead test instance's host table, if any.
func deleteHostTable(name string) {
	c, err := nftables.New()
	if err != nil {
		return
	}
	t := &nftables.Table{Name: name, Family: nftables.TableFamilyINet}
	c.AddTable(t)
	c.DelTable(t)
	_ = c.Flush()
}
