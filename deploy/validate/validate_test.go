package validate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shipped is the manifest directory this module validates.
const shipped = "../kubernetes"

func TestShippedManifestsPass(t *testing.T) {
	start := time.Now()
	probs := Dir(shipped)
	for _, p := range probs {
		t.Error(p)
	}
	objs := 0
	for _, f := range mustGlob(t, filepath.Join(shipped, "*.yaml")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := Decode(f, data)
		objs += len(o)
	}
	// namespace, 2 service accounts, deployment, 2 services, PDB,
	// daemonset, 3 network policies, migration job.
	if objs != 12 {
		t.Errorf("decoded %d objects, want 12 (a document lost or added without updating this test?)", objs)
	}
	t.Logf("%d objects in %s: %d problems in %v", objs, shipped, len(probs), time.Since(start))
}

// TestRenderedManifestsPass validates what `kubectl apply -k` would send:
// kustomize's rendering of the directory (kubectl renders offline).
func TestRenderedManifestsPass(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl to render the kustomization with")
	}
	out, err := exec.Command(kubectl, "kustomize", shipped).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}
	for _, p := range Stream("rendered", out) {
		t.Error(p)
	}
	if objs, _ := Decode("rendered", out); len(objs) != 12 {
		t.Errorf("rendered %d objects, want 12", len(objs))
	}
}

// mutation is one negative fixture: a change to a shipped file that a
// rule must catch.
type mutation struct {
	name, file, old, new, want string
}

var mutations = []mutation{
	{"typo'd field", "api.yaml", "readinessProbe:", "readinesProbe:", `unknown field "spec.template.spec.containers[0].readinesProbe"`},
	{"duplicate field", "node.yaml", "      hostPID: false\n", "      hostPID: false\n      hostPID: false\n", `"hostPID" already set`},
	{"typo'd kustomization key", "kustomization.yaml", "resources:", "resource:", "strict decoding"},
	{"file left out of the kustomization", "kustomization.yaml", "  - migrate-job.yaml\n", "", "migrate-job.yaml: not listed"},
	{"latest image", "api.yaml", "image: registry.example.com/airlock-api:0.1.0", "image: registry.example.com/airlock-api:latest", "is not pinned"},
	{"untagged image", "node.yaml", "image: registry.example.com/airlock-node:0.1.0", "image: registry.example.com/airlock-node", "is not pinned"},
	{"node image in the API", "api.yaml", "image: registry.example.com/airlock-api:0.1.0", "image: registry.example.com/airlock-node:0.1.0", `is not api's image airlock-api`},
	{"API image on the node", "node.yaml", "image: registry.example.com/airlock-node:0.1.0", "image: registry.example.com/airlock-api:0.1.0", `is not node's image airlock-node`},
	{"kustomization image unpinned", "kustomization.yaml", "name: registry.example.com/airlock-node\n    newName: registry.example.com/airlock-node\n    newTag: 0.1.0", "name: registry.example.com/airlock-node\n    newName: registry.example.com/airlock-node\n    newTag: latest", "is not pinned"},
	{"readiness not on /readyz", "api.yaml", "path: /readyz", "path: /healthz", "not an HTTP GET of /readyz"},
	{"no liveness probe", "node.yaml", "          livenessProbe:\n            httpGet:\n              path: /healthz\n              port: node\n            periodSeconds: 10\n            failureThreshold: 6\n", "", "no livenessProbe"},
	{"probe on a missing port", "node.yaml", "path: /readyz\n              port: node", "path: /readyz\n              port: nod", "probe port nod"},
	{"privileged API pod", "api.yaml", "privileged: false", "privileged: true", "only DaemonSet/airlock-node may be"},
	{"capability added to the job", "migrate-job.yaml", "drop: [\"ALL\"]", "drop: [\"ALL\"]\n              add: [\"NET_ADMIN\"]", "only DaemonSet/airlock-node may be"},
	{"host network node", "node.yaml", "hostNetwork: false", "hostNetwork: true", "hostNetwork"},
	{"hostPath on the API", "api.yaml", "        - name: tmp\n          emptyDir:\n            sizeLimit: 64Mi", "        - name: tmp\n          hostPath:\n            path: /tmp", "only DaemonSet/airlock-node may mount host paths"},
	{"DSN inline", "api.yaml", "              valueFrom:\n                secretKeyRef:\n                  name: airlock-postgres\n                  key: dsn", "              value: postgres://airlock:hunter2@db/airlock", "env AIRLOCK_CLUSTER_DSN is written inline"},
	{"DSN as a flag", "api.yaml", "            - api\n", "            - api\n            - --dsn=host=db password=hunter2\n", "carries a credential"},
	{"Secret in the manifests", "api.yaml", "---\napiVersion: apps/v1\n", "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: airlock-postgres\n  namespace: airlock\nstringData:\n  dsn: host=db\n---\napiVersion: apps/v1\n", "a Secret is written"},
	{"Service selects nothing", "api.yaml", "  name: airlock-api-internal\n  namespace: airlock\n  labels:\n    app.kubernetes.io/name: airlock\n    app.kubernetes.io/component: api\nspec:\n  type: ClusterIP\n  selector:\n    app.kubernetes.io/name: airlock\n    app.kubernetes.io/component: api\n", "  name: airlock-api-internal\n  namespace: airlock\n  labels:\n    app.kubernetes.io/name: airlock\n    app.kubernetes.io/component: api\nspec:\n  type: ClusterIP\n  selector:\n    app.kubernetes.io/name: airlock\n    app.kubernetes.io/component: apii\n", "matches no workload"},
	{"Deployment selector misses its pods", "api.yaml", "  replicas: 3\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: airlock\n      app.kubernetes.io/component: api\n", "  replicas: 3\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: airlock\n      app.kubernetes.io/component: apii\n", "does not match its pod template's labels"},
	{"wrong target port name", "api.yaml", "targetPort: internal", "targetPort: internl", "targetPort internl is not a port"},
	{"no memory limit", "api.yaml", "              cpu: \"2\"\n              memory: 1Gi\n", "              cpu: \"2\"\n", "no memory limit"},
	{"no cpu request", "node.yaml", "              cpu: \"4\"\n", "", "no cpu request"},
	{"API as root", "api.yaml", "runAsNonRoot: true", "runAsNonRoot: false", "runAsNonRoot is not true"},
	{"API root filesystem writable", "api.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "readOnlyRootFilesystem is not true"},
	{"service account token mounted", "api.yaml", "      automountServiceAccountToken: false\n      # In-flight", "      # In-flight", "automountServiceAccountToken is not false"},
	{"node open to everyone", "network-policy.yaml", "  ingress:\n    - from:\n        - podSelector:\n            matchLabels:\n              app.kubernetes.io/name: airlock\n              app.kubernetes.io/component: api\n      ports:\n        - port: node\n", "  ingress:\n    - ports:\n        - port: node\n", "admits every source to the node daemon"},
	{"node open to another namespace", "network-policy.yaml", "  ingress:\n    - from:\n        - podSelector:", "  ingress:\n    - from:\n        - namespaceSelector: {}\n          podSelector:", "admits more than the API tier's pods"},
	{"node open to itself", "network-policy.yaml", "              app.kubernetes.io/component: api\n      ports:\n        - port: node\n", "              app.kubernetes.io/component: node\n      ports:\n        - port: node\n", "admits DaemonSet/airlock-node to the node daemon"},
	{"no policy guards the node", "network-policy.yaml", "  name: airlock-node-ingress\n  namespace: airlock\n  labels:\n    app.kubernetes.io/name: airlock\n    app.kubernetes.io/component: node\nspec:\n  podSelector:\n    matchLabels:\n      app.kubernetes.io/name: airlock\n      app.kubernetes.io/component: node\n", "  name: airlock-node-ingress\n  namespace: airlock\n  labels:\n    app.kubernetes.io/name: airlock\n    app.kubernetes.io/component: node\nspec:\n  podSelector:\n    matchLabels:\n      app.kubernetes.io/name: airlock\n      app.kubernetes.io/component: api\n", "no ingress NetworkPolicy selects the node daemon"},
	{"node state on a pod volume", "node.yaml", "        - name: state\n          hostPath:\n            path: /var/lib/airlock\n            type: DirectoryOrCreate\n", "        - name: state\n          emptyDir: {}\n", "state directory /var/lib/airlock is not a hostPath volume"},
	{"node state not mounted", "node.yaml", "            - name: state\n              mountPath: /var/lib/airlock\n", "", "state directory /var/lib/airlock is not a mounted volume"},
	{"node listens off its port", "node.yaml", "--node-listen=0.0.0.0:7443", "--node-listen=0.0.0.0:7444", "--node-listen listens on 7444, which is not one of its ports"},
	{"API listens off its port", "api.yaml", "--internal-listen=0.0.0.0:8443", "--internal-listen=0.0.0.0:9443", "--internal-listen listens on 9443"},
	{"node points at a missing Service", "node.yaml", "--cluster-api=http://airlock-api-internal.airlock.svc:8443", "--cluster-api=http://airlock-internal.airlock.svc:8443", "no Service airlock-internal in namespace airlock"},
	{"node points at the public port", "node.yaml", "--cluster-api=http://airlock-api-internal.airlock.svc:8443", "--cluster-api=http://airlock-api-internal.airlock.svc:8080", "has no port 8080"},
	{"object outside the namespace", "migrate-job.yaml", "  name: airlock-migrate\n  namespace: airlock\n", "  name: airlock-migrate\n  namespace: default\n", `namespace "default", want "airlock"`},
}

// TestNegativeFixtures applies each mutation to a copy of the shipped
// manifests and expects the validator to report it.
func TestNegativeFixtures(t *testing.T) {
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range mustGlob(t, filepath.Join(shipped, "*.yaml")) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if filepath.Base(f) == m.file {
					s := string(data)
					if n := strings.Count(s, m.old); n != 1 {
						t.Fatalf("fixture out of date: %q occurs %d times in %s, want once", m.old, n, m.file)
					}
					data = []byte(strings.Replace(s, m.old, m.new, 1))
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			probs := Dir(dir)
			for _, p := range probs {
				if strings.Contains(p.String(), m.want) {
					t.Logf("caught: %s", p)
					return
				}
			}
			t.Errorf("not caught: want a problem containing %q, got %d: %v", m.want, len(probs), probs)
		})
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	fs, err := filepath.Glob(pattern)
	if err != nil || len(fs) == 0 {
		t.Fatalf("glob %s: %v (%d files)", pattern, err, len(fs))
	}
	return fs
}
