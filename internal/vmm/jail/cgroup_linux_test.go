//go:build linux

package jail

import (
	"os"
	"strings"
	"testing"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const hybridSelf = `8:pids:/
4:memory:/process_api/b6c1
1:cpu:/
0::/
`

const v2Mountinfo = `25 1 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
`

func files(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if s, ok := m[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
}

// TestCgroupsOnAHybridHost: every controller on v1 (each in its own
// hierarchy, under this process's own cgroup there), the empty v2 mount
// ignored. This is the project's CI host.
func TestCgroupsOnAHybridHost(t *testing.T) {
	cg, err := parseCgroups("x1", hybridMountinfo, hybridSelf, files(map[string]string{"/sys/fs/cgroup/unified/cgroup.controllers": ""}))
	if err != nil {
		t.Fatal(err)
	}
	got := cg.describe()
	want := map[string]string{
		"memory": "v1 /sys/fs/cgroup/memory/process_api/b6c1/airlock-x1",
		"pids":   "v1 /sys/fs/cgroup/pids/airlock-x1",
		"cpu":    "v1 /sys/fs/cgroup/cpu/airlock-x1",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestCgroupsOnV2: one hierarchy for all three, under the process's own
// cgroup.
func TestCgroupsOnV2(t *testing.T) {
	cg, err := parseCgroups("x1", v2Mountinfo, "0::/system.slice/airlock.service\n",
		files(map[string]string{"/sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cg.hs) != 1 || !cg.hs[0].v2 || strings.Join(cg.hs[0].ctrls, ",") != "cpu,memory,pids" {
		t.Fatalf("hierarchies %+v", cg.hs[0])
	}
	if p := cg.parent(cg.hs[0]); p != "/sys/fs/cgroup/system.slice/airlock.service/airlock-x1" {
		t.Errorf("parent %s", p)
	}
}

// TestCgroupsMissingController: a host without a pids hierarchy cannot
// jail, and says which controller is missing.
func TestCgroupsMissingController(t *testing.T) {
	mi := strings.ReplaceAll(hybridMountinfo, "rw,pids", "rw,freezer")
	_, err := parseCgroups("x1", mi, hybridSelf, files(nil))
	if err == nil || !strings.Contains(err.Error(), "pids") {
		t.Fatalf("err = %v, want one naming pids", err)
	}
}

// TestLimitFiles: the files and values each version takes.
func TestLimitFiles(t *testing.T) {
	lim := Limits{MemoryBytes: 640 << 20, CPUs: 1.5, Pids: 256}
	v1 := map[string]string{}
	v2 := map[string]string{}
	for _, c := range controllers {
		for _, kv := range limitFiles(false, c, lim) {
			v1[kv[0]] = kv[1]
		}
		for _, kv := range limitFiles(true, c, lim) {
			v2[kv[0]] = kv[1]
		}
	}
	for k, want := range map[string]string{"memory.limit_in_bytes": "671088640", "pids.max": "256", "cpu.cfs_quota_us": "150000", "cpu.cfs_period_us": "100000"} {
		if v1[k] != want {
			t.Errorf("v1 %s = %q, want %q", k, v1[k], want)
		}
	}
	for k, want := range map[string]string{"memory.max": "671088640", "memory.swap.max": "0", "pids.max": "256", "cpu.max": "150000 100000"} {
		if v2[k] != want {
			t.Errorf("v2 %s = %q, want %q", k, v2[k], want)
		}
	}
}
