// Command airlock-jailer starts one VMM process inside its jail: the host
// side of internal/vmm/jail runs it in new namespaces with the jail's
// spec as its only argument, and it execs the VMM once the jail is built.
// It is static, and nothing else should run it.
package main

import (
	"fmt"
	"os"

	"github.com/airlock-dev/airlock/internal/vmm/jail"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "airlock-jailer: started by airlock only (one argument: the jail spec)")
		os.Exit(2)
	}
	err := jail.Run(os.Args[1])
	fmt.Fprintf(os.Stderr, "airlock-jailer: %v\n", err)
	os.Exit(jail.ExitSetup)
}
