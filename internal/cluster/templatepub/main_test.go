package templatepub_test

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
)

func TestMain(m *testing.M) { clustertest.Main(m) }
