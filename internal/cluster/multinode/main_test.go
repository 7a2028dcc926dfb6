package multinode

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
)

func TestMain(m *testing.M) { multiproc.Main(m) }
