package validate

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The image test builds airlock's two images with deploy/image/build.sh,
// unpacks them and runs them as the manifests do. It needs root, Go,
// mmdebstrap, umoci, skopeo and docker-registry (scripts/setup.sh --test
// installs them);
// without them it skips, unless AIRLOCK_REQUIRE_IMAGE=1 (scripts/test.sh)
// makes that a failure. With the node's Debian root cached it takes about
// 45 s; the first build 2.5 minutes more (4 with a cold Go build cache).
// Beside two CPU-bound processes a niced first build outlasted go test's
// 10-minute default; not niced, it took the package 97 s there.
// scripts/test.sh gives the package 30 minutes all the same.

// ociImage is what the test reads of one image in an OCI layout.
type ociImage struct {
	Dir     string // the layout, unpacked from the archive
	RefName string // index.json's org.opencontainers.image.ref.name: the tag
	Digest  string // the manifest's
	Layers  []string
	Config  imageConfig
}

// imageConfig is the part of an OCI image config the test checks.
type imageConfig struct {
	User       string            `json:"User"`
	Env        []string          `json:"Env"`
	Entrypoint []string          `json:"Entrypoint"`
	WorkingDir string            `json:"WorkingDir"`
	Labels     map[string]string `json:"Labels"`
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
}

func TestImages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the container images")
	}
	requireImageTools(t)
	out := t.TempDir()
	start := time.Now()
	// Not niced: beside CPU-bound work a niced build gets a tenth of a
	// core and a cold bootstrap outlasted 10 minutes.
	b, err := exec.Command("../image/build.sh", "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("deploy/image/build.sh: %v\n%s", err, b)
	}
	t.Logf("deploy/image/build.sh in %v:\n%s", time.Since(start).Round(time.Second), b)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	objs := shippedObjects(t)
	tags := kustomizationTags(t)
	registry := startRegistry(t)
	for _, name := range []string{"airlock-api", "airlock-node"} {
		t.Run(name, func(t *testing.T) {
			archive := filepath.Join(out, name+".oci.tar")
			if b, err := exec.Command("skopeo", "inspect", "oci-archive:"+archive).CombinedOutput(); err != nil {
				t.Fatalf("skopeo cannot read %s: %v\n%s", archive, err, b)
			}
			img := readImage(t, archive)
			push(t, archive, registry+"/"+name+":"+img.RefName, img)
			if got := img.Config.Labels["org.opencontainers.image.revision"]; got != strings.TrimSpace(string(head)) {
				t.Errorf("revision label %q, want HEAD %s", got, head)
			}
			if got := img.Config.Labels["org.opencontainers.image.title"]; got != name {
				t.Errorf("title label %q, want %s", got, name)
			}
			if tags[name] != img.RefName {
				t.Errorf("kustomization.yaml pins %s at %q, the image is tagged %q", name, tags[name], img.RefName)
			}
			rootfs := unpack(t, img)
			version := strings.TrimSpace(mustRun(t, rootfs, img, as{user: img.Config.User}, "/usr/local/bin/airlock", "version"))
			if want := img.Config.Labels["org.opencontainers.image.version"]; !strings.Contains(version, want) {
				t.Errorf("airlock version in the image says %q, the label %q", version, want)
			}
			n := 0
			for _, p := range pods(objs) {
				if ComponentImage[p.meta.Labels["app.kubernetes.io/component"]] != name {
					continue
				}
				for _, c := range p.spec.Containers {
					checkContainer(t, p, c, img, rootfs)
					n++
				}
			}
			if n == 0 {
				t.Fatalf("no container in the manifests runs %s", name)
			}
			if name == "airlock-node" {
				checkNodeTools(t, rootfs, img)
			} else if _, err := os.Lstat(filepath.Join(rootfs, "bin/sh")); err == nil {
				t.Errorf("the API image has a shell")
			}
		})
	}
}

// checkContainer runs the container's airlock subcommand with --help in
// the image, as its pod's user and with its root read-only if the pod's
// is, and checks that every flag the manifest passes exists.
func checkContainer(t *testing.T, p pod, c corev1.Container, img ociImage, rootfs string) {
	t.Helper()
	repo, tag := ImageRepo(c.Image)
	if path.Base(repo) != path.Base(img.Config.Labels["org.opencontainers.image.title"]) || tag != img.RefName {
		t.Errorf("%s: image %s, built %s:%s", p.o.id(), c.Image, img.Config.Labels["org.opencontainers.image.title"], img.RefName)
	}
	if len(c.Command) > 0 && strings.Join(c.Command, " ") != strings.Join(img.Config.Entrypoint, " ") {
		t.Errorf("%s: command %v, the image's entrypoint %v", p.o.id(), c.Command, img.Config.Entrypoint)
	}
	user, ro := podUser(p, c)
	if uid, _, _ := strings.Cut(img.Config.User, ":"); user != "" && !strings.HasPrefix(user, uid+":") {
		t.Errorf("%s runs as %s, the image's user is %s", p.o.id(), user, img.Config.User)
	}
	if user == "" {
		user = img.Config.User
	}
	var sub []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "-") {
			break
		}
		sub = append(sub, a)
	}
	help := mustRun(t, rootfs, img, as{user: user, readOnly: ro}, append(append([]string{c.Command[0]}, sub...), "--help")...)
	unknown := 0
	for _, a := range c.Args[len(sub):] {
		flag, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(flag, "--") && !regexp.MustCompile(`\s`+regexp.QuoteMeta(flag)+`([\s,=]|$)`).MatchString(help) {
			t.Errorf("%s: airlock %s in the image has no flag %s", p.o.id(), strings.Join(sub, " "), flag)
			unknown++
		}
	}
	if unknown > 0 {
		return
	}
	t.Logf("%s: airlock %s --help as %s (read-only root %v): every flag of the manifest known", p.o.id(), strings.Join(sub, " "), user, ro)
}

// checkNodeTools: what `airlock serve` runs on the host side is there and
// runs, apt can resolve the guest kernel from the image's lists, and
// `airlock doctor` passes.
func checkNodeTools(t *testing.T, rootfs string, img ociImage) {
	t.Helper()
	for _, argv := range [][]string{
		{"qemu-system-x86_64", "--version"},
		{"nft", "--version"},
		{"ip", "-V"},
		{"mkfs.ext4", "-V"},
		{"mmdebstrap", "--version"},
		{"dpkg-deb", "--version"},
		{"/bin/busybox", "true"},
	} {
		out, err := runIn(rootfs, img, as{user: "0:0"}, argv...)
		if err != nil {
			t.Errorf("%v in the node image: %v\n%s", argv, err, out)
			continue
		}
		t.Logf("%s: %s", argv[0], firstLine(out))
	}
	for _, b := range []string{"airlock-agent", "airlock-jailer", "airlock-docs"} {
		if fi, err := os.Stat(filepath.Join(rootfs, "usr/local/bin", b)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s beside airlock in the node image: %v", b, err)
		}
	}
	out := mustRun(t, rootfs, img, as{user: "0:0"}, "apt-cache", "depends", "linux-image-cloud-amd64")
	if !strings.Contains(out, "Depends: linux-image-") {
		t.Errorf("apt-cache cannot resolve the guest kernel in the node image:\n%s", out)
	}
	// What the daemon checks before it runs VMs, with the host's /dev and
	// /sys as the privileged node container has them (its cache is the
	// image's empty one: "kernel cached" only warns).
	out = mustRun(t, rootfs, img, as{user: "0:0", privileged: true}, "/usr/local/bin/airlock", "doctor")
	t.Logf("airlock doctor in the node image:\n%s", out)
	checkNodeBoots(t, rootfs, img)
}

// checkNodeBoots boots a real VM from inside the node image: `airlock
// run` (the minimal busybox root, no template) prints the guest's kernel
// release. Its cache is the test's own, seeded with the kernels this
// host's airlock has fetched (the DaemonSet keeps them on the host the
// same way); a kernel not among them is fetched as a node would.
func checkNodeBoots(t *testing.T, rootfs string, img ociImage) {
	t.Helper()
	cache := t.TempDir()
	host := os.Getenv("AIRLOCK_CACHE_DIR")
	if host == "" {
		host = "/var/cache/airlock"
	}
	kernels, _ := filepath.Glob(filepath.Join(host, "kernel", "linux-image-*"))
	if len(kernels) > 0 {
		if err := os.Mkdir(filepath.Join(cache, "kernel"), 0o755); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("cp", append(append([]string{"-a"}, kernels...), filepath.Join(cache, "kernel"))...).CombinedOutput(); err != nil {
			t.Fatalf("seed the kernel cache: %v\n%s", err, b)
		}
	}
	start := time.Now()
	out := mustRun(t, rootfs, img, as{user: "0:0", privileged: true, cache: cache},
		"/usr/local/bin/airlock", "run", "--", "uname", "-r")
	if !strings.Contains(out, "-cloud-amd64") {
		t.Errorf("airlock run -- uname -r in the node image printed %q, want the guest's cloud kernel", out)
	}
	t.Logf("a VM booted in the node image in %v: uname -r = %s", time.Since(start).Round(100*time.Millisecond), firstLine(out))
}

// startRegistry starts a registry of its own (Debian's docker-registry,
// the CNCF distribution) on a loopback port, storing into a temporary
// directory, and returns its host:port once it answers.
func startRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	config := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "store"), addr)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker-registry", "serve", filepath.Join(dir, "config.yml"))
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case <-exited:
			t.Fatalf("docker-registry exited: %v\n%s", waitErr, logs.String())
		default:
		}
		if resp, err := http.Get("http://" + addr + "/v2/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			stop() // its output is complete once it has exited
			t.Fatalf("docker-registry on %s did not answer /v2/ in 30 s\n%s", addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// push copies the archive to ref as the README says (skopeo copy
// oci-archive:... docker://...) and checks the registry serves the same
// manifest: pushing changed nothing.
func push(t *testing.T, archive, ref string, img ociImage) {
	t.Helper()
	if b, err := exec.Command("skopeo", "copy", "--quiet", "--dest-tls-verify=false",
		"oci-archive:"+archive, "docker://"+ref).CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy to %s: %v\n%s", ref, err, b)
	}
	b, err := exec.Command("skopeo", "inspect", "--tls-verify=false", "docker://"+ref).Output()
	if err != nil {
		t.Fatalf("skopeo inspect %s: %v", ref, err)
	}
	var got struct{ Digest string }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Digest != img.Digest {
		t.Errorf("%s serves manifest %s, the archive holds %s", ref, got.Digest, img.Digest)
	}
	t.Logf("pushed to %s: %s", ref, got.Digest)
}

func requireImageTools(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range []string{"mmdebstrap", "umoci", "skopeo", "docker-registry", "unshare", "chroot", "make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("AIRLOCK_REQUIRE_IMAGE") == "1" {
		t.Fatalf("building the images needs %v (scripts/setup.sh --test installs them)", missing)
	}
	t.Skipf("building the images needs %v", missing)
}

func shippedObjects(t *testing.T) []Object {
	t.Helper()
	var objs []Object
	for _, f := range mustGlob(t, filepath.Join(shipped, "*.yaml")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := Decode(f, data)
		objs = append(objs, o...)
	}
	return objs
}

// kustomizationTags maps image names (airlock-api) to the tag
// kustomization.yaml sets.
func kustomizationTags(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(shipped, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, im := range k.Images {
		tags[path.Base(im.Name)] = im.NewTag
	}
	return tags
}

// readImage unpacks an oci-archive and reads its one image's index entry,
// manifest and config.
func readImage(t *testing.T, archive string) ociImage {
	t.Helper()
	img := ociImage{Dir: t.TempDir()}
	if b, err := exec.Command("tar", "-xf", archive, "-C", img.Dir).CombinedOutput(); err != nil {
		t.Fatalf("untar %s: %v\n%s", archive, err, b)
	}
	var index struct{ Manifests []descriptor }
	readBlob(t, filepath.Join(img.Dir, "index.json"), &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("%s: %d images, want 1", archive, len(index.Manifests))
	}
	img.RefName = index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	img.Digest = index.Manifests[0].Digest
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	readBlob(t, blobPath(img.Dir, index.Manifests[0].Digest), &manifest)
	var config struct{ Config imageConfig }
	readBlob(t, blobPath(img.Dir, manifest.Config.Digest), &config)
	img.Config = config.Config
	for _, l := range manifest.Layers {
		img.Layers = append(img.Layers, l.Digest)
	}
	return img
}

func blobPath(dir, digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(dir, "blobs", alg, hex)
}

func readBlob(t *testing.T, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// unpack extracts the image's layers into a root filesystem with umoci.
func unpack(t *testing.T, img ociImage) string {
	t.Helper()
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	if b, err := exec.Command("umoci", "raw", "unpack", "--image", img.Dir+":"+img.RefName, rootfs).CombinedOutput(); err != nil {
		t.Fatalf("umoci raw unpack: %v\n%s", err, b)
	}
	return rootfs
}

// podUser is the uid:gid a container runs as by its manifest ("" when it
// does not say) and whether its root is read-only.
func podUser(p pod, c corev1.Container) (string, bool) {
	var uid, gid *int64
	if sc := p.spec.SecurityContext; sc != nil {
		uid, gid = sc.RunAsUser, sc.RunAsGroup
	}
	ro := false
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
		ro = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	}
	if uid == nil {
		return "", ro
	}
	g := *uid
	if gid != nil {
		g = *gid
	}
	return strconv.FormatInt(*uid, 10) + ":" + strconv.FormatInt(g, 10), ro
}

// as is how runIn runs a command: the container's user (uid:gid), a
// read-only root (readOnlyRootFilesystem), and what a privileged
// container sees of the host (/dev, /sys).
type as struct {
	user       string
	readOnly   bool
	privileged bool
	cache      string // a directory mounted at /var/cache/airlock (node.yaml's hostPath)
}

// runIn runs argv in rootfs the way a container runtime would: in mount
// and PID namespaces of its own (nothing mounted leaks out), with a fresh
// /proc, a tmpfs on /tmp and the image's environment.
func runIn(rootfs string, img ociImage, how as, argv ...string) (string, error) {
	const script = `set -e
r=$1; ro=$2; priv=$3; cache=$4; shift 4
mount --bind "$r" "$r"
[ "$ro" = false ] || mount -o remount,bind,ro "$r"
mount -t proc proc "$r/proc"
mount -t tmpfs tmpfs "$r/tmp"
if [ "$priv" = true ]; then
  mount --rbind /dev "$r/dev"
  mount --rbind /sys "$r/sys"
  touch "$r/etc/resolv.conf"
  mount --bind /etc/resolv.conf "$r/etc/resolv.conf"
fi
[ -z "$cache" ] || mount --bind "$cache" "$r/var/cache/airlock"
exec env -i "$@"`
	user := how.user
	_, gid, _ := strings.Cut(user, ":")
	chroot, err := exec.LookPath("chroot")
	if err != nil {
		return "", err
	}
	args := []string{"--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script, "sh",
		rootfs, strconv.FormatBool(how.readOnly), strconv.FormatBool(how.privileged), how.cache}
	args = append(args, img.Config.Env...)
	args = append(args, chroot, "--userspec="+user, "--groups="+gid, rootfs)
	cmd := exec.Command("unshare", append(args, argv...)...)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

func mustRun(t *testing.T, rootfs string, img ociImage, how as, argv ...string) string {
	t.Helper()
	out, err := runIn(rootfs, img, how, argv...)
	if err != nil {
		t.Fatalf("%v in the image as %+v: %v\n%s", argv, how, err, out)
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return fmt.Sprintf("%.100s", l)
}
