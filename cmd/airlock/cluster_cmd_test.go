package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
)

func TestClusterSimJSONLines(t *testing.T) {
	out, errOut, code := runCLI(t, nil, "cluster", "sim", "--nodes", "20", "--slots", "32", "--load", "0.5,0.9", "--seed", "7", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per load level:\n%s", len(lines), out)
	}
	for i, line := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		for _, k := range []string{"load", "success_rate", "attempts_per_create", "max_fill_over_mean", "warm_hit_ratio",
			"decision_p99_us", "dead_node_dispatches", "detection_s", "wall_s", "rss_mib"} {
			if _, ok := r[k]; !ok {
				t.Errorf("line %d has no %q: %s", i, k, line)
			}
		}
		if want := []float64{0.5, 0.9}[i]; r["load"] != want {
			t.Errorf("line %d: load %v, want %v", i, r["load"], want)
		}
	}
}

func TestClusterSimTableAndUsage(t *testing.T) {
	out, errOut, code := runCLI(t, nil, "cluster", "sim", "--nodes", "10", "--slots", "16", "--load", "0.8")
	if code != 0 || !strings.Contains(out, "success") || !strings.Contains(out, "0.80") {
		t.Fatalf("exit %d, table:\n%s%s", code, out, errOut)
	}
	_, errOut, code = runCLI(t, nil, "cluster", "sim", "--load", "1.5")
	if code != exitUsage || !strings.Contains(errOut, "load 1.5") {
		t.Fatalf("load 1.5: exit %d, %s; want usage error", code, errOut)
	}
}

// TestClusterMigrate migrates a new database twice (the second run
// changes nothing) and refuses to run without one.
func TestClusterMigrate(t *testing.T) {
	_, errOut, code := runCLI(t, map[string]string{clusterDSNEnv: ""}, "cluster", "migrate")
	if code == 0 || !strings.Contains(errOut, "--dsn") {
		t.Fatalf("without a database: exit %d, %s", code, errOut)
	}
	srv := clustertest.Private(t)
	dsn := srv.Database(t)
	for range 2 {
		out, errOut, code := runCLI(t, nil, "cluster", "migrate", "--dsn", dsn)
		if code != 0 || !strings.Contains(out, "cluster schema at version 3") {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
	}
	out, errOut, code := runCLI(t, map[string]string{clusterDSNEnv: dsn}, "cluster", "migrate")
	if code != 0 || !strings.Contains(out, "version 3") {
		t.Fatalf("from the environment: exit %d: %s%s", code, out, errOut)
	}
}

// The operator commands say what is missing: a database, a state
// directory, a store in it; each with its stable code.
func TestFleetCommandRefusals(t *testing.T) {
	noDB := map[string]string{clusterDSNEnv: ""}
	for _, args := range [][]string{{"node", "ls"}, {"node", "drain", "n1"}, {"node", "undrain", "n1"},
		{"cluster", "import", "--state-dir", t.TempDir()}} {
		_, errOut, code := runCLI(t, noDB, args...)
		if code != exitUsage || !strings.Contains(errOut, "--dsn") || !strings.Contains(errOut, "[invalid_argument]") {
			t.Errorf("%v without a database: exit %d, %s", args, code, errOut)
		}
	}
	if _, errOut, code := runCLI(t, noDB, "cluster", "import"); code != exitUsage || !strings.Contains(errOut, "--state-dir") {
		t.Errorf("import without --state-dir: exit %d, %s", code, errOut)
	}
	dsn := clustertest.Private(t).Database(t)
	_, errOut, code := runCLI(t, nil, "cluster", "import", "--dsn", dsn, "--state-dir", t.TempDir(), "--node-id", "h1")
	if code != exitAirlock || !strings.Contains(errOut, "no airlock store") || !strings.Contains(errOut, "[not_found]") {
		t.Errorf("import of an empty directory: exit %d, %s", code, errOut)
	}
	_, errOut, code = runCLI(t, nil, "cluster", "import", "--dsn", dsn, "--state-dir", t.TempDir(), "--node-id", "Not A Node")
	if code != exitUsage || !strings.Contains(errOut, "[invalid_argument]") {
		t.Errorf("import as a malformed node id: exit %d, %s", code, errOut)
	}
	out, errOut, code := runCLI(t, nil, "node", "ls", "--dsn", dsn, "--json")
	if code != 0 || !strings.Contains(out, `"nodes": []`) {
		t.Errorf("node ls of an empty cluster: exit %d, %s%s", code, out, errOut)
	}
}
