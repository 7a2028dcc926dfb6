// Package validate checks airlock's Kubernetes manifests offline, with no
// cluster: every document is decoded with client-go's scheme in strict
// mode (an unknown or duplicated field is an error, as the API server
// would refuse or silently drop it), then checked against the rules
// airlock's deployment depends on.
//
// It lives in a module of its own so that client-go never enters
// airlock's main module (building it costs about a minute on two cores).
package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// PrivilegedWorkload is the one workload allowed to run privileged: the
// node daemon, which makes jails, cgroups, namespaces and nftables tables
// and opens /dev/kvm. Everything else must run unprivileged.
const PrivilegedWorkload = "DaemonSet/airlock-node"

// Object is one decoded document.
type Object struct {
	Source string // file:document-number
	Obj    runtime.Object
	Kind   string
	Name   string
	NS     string
}

func (o Object) id() string { return o.Kind + "/" + o.Name }

// Problem is one finding: where, and what is wrong.
type Problem struct {
	Where string
	What  string
}

func (p Problem) String() string { return p.Where + ": " + p.What }

// strict decodes YAML into typed objects and fails on unknown and
// duplicate fields.
var strict = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
	json.SerializerOptions{Yaml: true, Strict: true})

// Decode splits a YAML stream into documents and decodes each strictly.
// Documents holding only comments are skipped.
func Decode(name string, data []byte) ([]Object, []Problem) {
	var objs []Object
	var probs []Problem
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		where := fmt.Sprintf("%s:%d", name, n)
		if err != nil {
			probs = append(probs, Problem{where, "reading YAML: " + err.Error()})
			break
		}
		if isBlank(doc) {
			continue
		}
		obj, gvk, err := strict.Decode(doc, nil, nil)
		if err != nil {
			probs = append(probs, Problem{where, "strict decoding: " + err.Error()})
			continue
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			probs = append(probs, Problem{where, fmt.Sprintf("%s has no object metadata", gvk)})
			continue
		}
		objs = append(objs, Object{Source: where, Obj: obj, Kind: gvk.Kind, Name: m.GetName(), NS: m.GetNamespace()})
	}
	return objs, probs
}

func isBlank(doc []byte) bool {
	for _, l := range strings.Split(string(doc), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}

// kustomization is the part of kustomization.yaml airlock uses; decoded
// strictly too, so a misspelt key is caught.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
		Digest  string `json:"digest,omitempty"`
	} `json:"images,omitempty"`
}

// Dir validates a manifest directory: its kustomization.yaml must list
// every other YAML file in it (so nothing shipped goes unapplied or
// unchecked), and every listed file is decoded and checked.
func Dir(dir string) []Problem {
	kpath := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(kpath)
	if err != nil {
		return []Problem{{dir, err.Error()}}
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return []Problem{{kpath, "strict decoding: " + err.Error()}}
	}
	var probs []Problem
	if k.Kind != "Kustomization" {
		probs = append(probs, Problem{kpath, fmt.Sprintf("kind %q, want Kustomization", k.Kind)})
	}
	for _, im := range k.Images {
		if im.Digest == "" && (im.NewTag == "" || im.NewTag == "latest") {
			probs = append(probs, Problem{kpath, fmt.Sprintf("image %s: newTag %q is not pinned (give a version tag or a digest)", im.Name, im.NewTag)})
		}
	}
	listed := map[string]bool{}
	for _, r := range k.Resources {
		listed[r] = true
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !listed[b] {
			probs = append(probs, Problem{f, "not listed in kustomization.yaml's resources"})
		}
	}
	var objs []Object
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		data, err := os.ReadFile(p)
		if err != nil {
			probs = append(probs, Problem{kpath, "resource " + r + ": " + err.Error()})
			continue
		}
		o, pr := Decode(p, data)
		objs = append(objs, o...)
		probs = append(probs, pr...)
	}
	if k.Namespace != "" {
		for i := range objs {
			if objs[i].Kind != "Namespace" && objs[i].NS == "" {
				objs[i].NS = k.Namespace
			}
		}
	}
	return append(probs, Check(objs)...)
}

// pod is a workload's pod template with where it came from.
type pod struct {
	o    Object
	meta metav1.ObjectMeta
	spec *corev1.PodSpec
}

func pods(objs []Object) []pod {
	var ps []pod
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			ps = append(ps, pod{o, v.Spec.Template.ObjectMeta, &v.Spec.Template.Spec})
		case *appsv1.DaemonSet:
			ps = append(ps, pod{o, v.Spec.Template.ObjectMeta, &v.Spec.Template.Spec})
		case *appsv1.StatefulSet:
			ps = append(ps, pod{o, v.Spec.Template.ObjectMeta, &v.Spec.Template.Spec})
		case *batchv1.Job:
			ps = append(ps, pod{o, v.Spec.Template.ObjectMeta, &v.Spec.Template.Spec})
		case *batchv1.CronJob:
			ps = append(ps, pod{o, v.Spec.JobTemplate.Spec.Template.ObjectMeta, &v.Spec.JobTemplate.Spec.Template.Spec})
		case *corev1.Pod:
			ps = append(ps, pod{o, v.ObjectMeta, &v.Spec})
		}
	}
	return ps
}

// longRunning: workloads that serve, which must have probes.
func (p pod) longRunning() bool {
	switch p.o.Obj.(type) {
	case *appsv1.Deployment, *appsv1.DaemonSet, *appsv1.StatefulSet:
		return true
	}
	return false
}

func containers(s *corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container{}, s.InitContainers...), s.Containers...)
}

// Check runs every rule over decoded objects (one application: Services,
// policies and budgets are matched against the workloads among them).
func Check(objs []Object) []Problem {
	var probs []Problem
	add := func(o Object, format string, args ...any) {
		probs = append(probs, Problem{o.Source + " " + o.id(), fmt.Sprintf(format, args...)})
	}
	ps := pods(objs)
	namespace := ""
	for _, o := range objs {
		if o.Kind == "Namespace" {
			namespace = o.Name
		}
	}
	for _, o := range objs {
		if o.Kind == "Secret" {
			add(o, "a Secret is written in the manifests: create it in the cluster and reference it (secretKeyRef, secret volumes)")
		}
		if namespace != "" && o.Kind != "Namespace" && o.NS != namespace {
			add(o, "namespace %q, want %q", o.NS, namespace)
		}
	}
	for _, p := range ps {
		checkPod(p, add)
	}
	probs = append(probs, checkSelectors(objs, ps)...)
	probs = append(probs, checkNodeIsolation(objs, ps)...)
	probs = append(probs, checkNodeState(ps)...)
	probs = append(probs, checkListenFlags(objs, ps)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Where < probs[j].Where })
	return probs
}

// sensitive names an environment variable that must come from a Secret.
var sensitive = regexp.MustCompile(`(?i)(DSN|PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIAL|API_?KEY|PRIVATE)`)

// inlineSecret spots a credential written into an argument or a value.
var inlineSecret = regexp.MustCompile(`(?i)(postgres(ql)?://|password=|^--dsn(=|$)|^--cluster-token(=|$)|alk_[a-z0-9])`)

func checkPod(p pod, add func(Object, string, ...any)) {
	o, s := p.o, p.spec
	privOK := o.id() == PrivilegedWorkload
	if s.HostNetwork {
		add(o, "hostNetwork: NetworkPolicy does not apply to host-network pods, and airlock needs none")
	}
	if s.HostPID || s.HostIPC {
		add(o, "hostPID/hostIPC: no airlock pod needs the host's process or IPC namespace")
	}
	privileged := false
	for _, c := range containers(s) {
		if sc := c.SecurityContext; sc != nil {
			if (sc.Privileged != nil && *sc.Privileged) || (sc.Capabilities != nil && len(sc.Capabilities.Add) > 0) {
				privileged = true
			}
		}
	}
	for _, v := range s.Volumes {
		if v.HostPath != nil && !privOK {
			add(o, "volume %s is a hostPath: only %s may mount host paths", v.Name, PrivilegedWorkload)
		}
	}
	if privileged && !privOK {
		add(o, "privileged (or added capabilities): only %s may be", PrivilegedWorkload)
	}
	if !privileged {
		checkUnprivileged(p, add)
	}
	for _, c := range containers(s) {
		checkImage(o, c, add)
		checkImageRole(p, c, add)
		checkResources(o, c, add)
		checkEnv(o, c, add)
		if p.longRunning() {
			checkProbes(o, c, add)
		}
	}
	if s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
		add(o, "automountServiceAccountToken is not false: airlock calls no Kubernetes API")
	}
}

// checkUnprivileged: every pod but the node daemon runs as non-root, with
// a read-only root, no privilege escalation and no capabilities.
func checkUnprivileged(p pod, add func(Object, string, ...any)) {
	podNonRoot := p.spec.SecurityContext != nil && p.spec.SecurityContext.RunAsNonRoot != nil && *p.spec.SecurityContext.RunAsNonRoot
	for _, c := range containers(p.spec) {
		sc := c.SecurityContext
		nonRoot := podNonRoot
		if sc != nil && sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
		if !nonRoot {
			add(p.o, "container %s: runAsNonRoot is not true", c.Name)
		}
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			add(p.o, "container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			add(p.o, "container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc == nil || sc.Capabilities == nil || !dropsAll(sc.Capabilities.Drop) {
			add(p.o, "container %s: capabilities do not drop ALL", c.Name)
		}
	}
}

func dropsAll(caps []corev1.Capability) bool {
	for _, c := range caps {
		if c == "ALL" {
			return true
		}
	}
	return false
}

// ComponentImage names the image (the repository's last path element)
// each component's pods run, as deploy/image/build.sh builds them: the
// node daemon needs QEMU, nftables and apt, which the unprivileged API
// image leaves out, and the API tier needs none of it.
var ComponentImage = map[string]string{
	"api":     "airlock-api",
	"migrate": "airlock-api",
	"node":    "airlock-node",
}

// ImageRepo splits an image reference into its repository and its tag or
// digest ("" when it has neither).
func ImageRepo(image string) (repo, ref string) {
	if i := strings.Index(image, "@"); i >= 0 {
		return image[:i], image[i+1:]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[:i], image[i+1:]
	}
	return image, ""
}

// checkImageRole: a pod of a known component runs that component's image.
func checkImageRole(p pod, c corev1.Container, add func(Object, string, ...any)) {
	want, ok := ComponentImage[p.meta.Labels["app.kubernetes.io/component"]]
	if !ok {
		return
	}
	repo, _ := ImageRepo(c.Image)
	if path.Base(repo) != want {
		add(p.o, "container %s: image %q is not %s's image %s (deploy/image/build.sh)", c.Name, c.Image, p.meta.Labels["app.kubernetes.io/component"], want)
	}
}

// checkImage: a tag other than latest, or a digest.
func checkImage(o Object, c corev1.Container, add func(Object, string, ...any)) {
	im := c.Image
	if strings.Contains(im, "@sha256:") {
		return
	}
	tag := ""
	if i := strings.LastIndex(im, ":"); i > strings.LastIndex(im, "/") {
		tag = im[i+1:]
	}
	if tag == "" || tag == "latest" {
		add(o, "container %s: image %q is not pinned (give a version tag or a digest)", c.Name, im)
	}
}

func checkResources(o Object, c corev1.Container, add func(Object, string, ...any)) {
	r := c.Resources
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := r.Requests[n]; !ok {
			add(o, "container %s: no %s request", c.Name, n)
		}
	}
	if _, ok := r.Limits[corev1.ResourceMemory]; !ok {
		add(o, "container %s: no memory limit", c.Name)
	}
}

func checkEnv(o Object, c corev1.Container, add func(Object, string, ...any)) {
	for _, e := range c.Env {
		if e.Value != "" && (sensitive.MatchString(e.Name) || inlineSecret.MatchString(e.Value)) {
			add(o, "container %s: env %s is written inline: take it from a Secret (valueFrom.secretKeyRef)", c.Name, e.Name)
		}
		if sensitive.MatchString(e.Name) && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef == nil {
			add(o, "container %s: env %s must come from a Secret (secretKeyRef)", c.Name, e.Name)
		}
	}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if inlineSecret.MatchString(a) {
			add(o, "container %s: argument %q carries a credential: read it from a Secret (env or file)", c.Name, a)
		}
	}
}

// checkProbes: a serving container has readiness on /readyz and liveness,
// both on ports it declares.
func checkProbes(o Object, c corev1.Container, add func(Object, string, ...any)) {
	if c.ReadinessProbe == nil {
		add(o, "container %s: no readinessProbe", c.Name)
	} else if g := c.ReadinessProbe.HTTPGet; g == nil || g.Path != "/readyz" {
		add(o, "container %s: readinessProbe is not an HTTP GET of /readyz", c.Name)
	}
	if c.LivenessProbe == nil {
		add(o, "container %s: no livenessProbe", c.Name)
	}
	for _, pr := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
		if pr != nil && pr.HTTPGet != nil && !hasPort([]corev1.Container{c}, pr.HTTPGet.Port) {
			add(o, "container %s: probe port %s is not one of its ports", c.Name, pr.HTTPGet.Port.String())
		}
	}
}

func hasPort(cs []corev1.Container, p intstr.IntOrString) bool {
	for _, c := range cs {
		for _, cp := range c.Ports {
			if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
				return true
			}
		}
	}
	return false
}

// selected returns the pods a selector matches (nil selector: none).
func selected(ps []pod, sel labels.Selector) []pod {
	var out []pod
	for _, p := range ps {
		if sel.Matches(labels.Set(p.meta.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func checkSelectors(objs []Object, ps []pod) []Problem {
	var probs []Problem
	add := func(o Object, format string, args ...any) {
		probs = append(probs, Problem{o.Source + " " + o.id(), fmt.Sprintf(format, args...)})
	}
	labelSel := func(o Object, ls *metav1.LabelSelector) labels.Selector {
		if ls == nil {
			add(o, "no selector")
			return labels.Nothing()
		}
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			add(o, "selector: %v", err)
			return labels.Nothing()
		}
		return s
	}
	for _, p := range ps {
		var ls *metav1.LabelSelector
		switch v := p.o.Obj.(type) {
		case *appsv1.Deployment:
			ls = v.Spec.Selector
		case *appsv1.DaemonSet:
			ls = v.Spec.Selector
		case *appsv1.StatefulSet:
			ls = v.Spec.Selector
		default:
			continue
		}
		if s := labelSel(p.o, ls); !s.Matches(labels.Set(p.meta.Labels)) {
			add(p.o, "selector %s does not match its pod template's labels %v", s, p.meta.Labels)
		}
	}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.Service:
			if len(v.Spec.Selector) == 0 {
				add(o, "no selector")
				continue
			}
			sel := selected(ps, labels.SelectorFromSet(v.Spec.Selector))
			if len(sel) == 0 {
				add(o, "selector %v matches no workload", v.Spec.Selector)
				continue
			}
			for _, sp := range v.Spec.Ports {
				tp := sp.TargetPort
				if tp.Type == intstr.Int && tp.IntVal == 0 {
					tp = intstr.FromInt32(sp.Port)
				}
				for _, p := range sel {
					if !hasPort(p.spec.Containers, tp) {
						add(o, "port %s: targetPort %s is not a port of %s", sp.Name, tp.String(), p.o.id())
					}
				}
			}
		case *policyv1.PodDisruptionBudget:
			if len(selected(ps, labelSel(o, v.Spec.Selector))) == 0 {
				add(o, "selector matches no workload")
			}
		case *networkingv1.NetworkPolicy:
			sel := selected(ps, labelSel(o, &v.Spec.PodSelector))
			if len(sel) == 0 {
				add(o, "podSelector matches no workload")
				continue
			}
			for _, r := range v.Spec.Ingress {
				for _, np := range r.Ports {
					if np.Port == nil {
						continue
					}
					for _, p := range sel {
						if !hasPort(p.spec.Containers, *np.Port) {
							add(o, "ingress port %s is not a port of %s", np.Port.String(), p.o.id())
						}
					}
				}
			}
		}
	}
	return probs
}

// checkNodeIsolation: the node daemon's pods are selected by an ingress
// NetworkPolicy, and every ingress rule that selects them admits API pods
// only (a pod selector in the same namespace matching the API workload
// and no other), on named node ports.
func checkNodeIsolation(objs []Object, ps []pod) []Problem {
	var node, apiPods []pod
	for _, p := range ps {
		switch p.o.id() {
		case PrivilegedWorkload:
			node = append(node, p)
		case "Deployment/airlock-api":
			apiPods = append(apiPods, p)
		}
	}
	if len(node) == 0 || len(apiPods) == 0 {
		return []Problem{{"manifests", fmt.Sprintf("want %s and Deployment/airlock-api", PrivilegedWorkload)}}
	}
	var probs []Problem
	covered := false
	for _, o := range objs {
		np, ok := o.Obj.(*networkingv1.NetworkPolicy)
		if !ok {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !s.Matches(labels.Set(node[0].meta.Labels)) {
			continue
		}
		ingress := false
		for _, t := range np.Spec.PolicyTypes {
			ingress = ingress || t == networkingv1.PolicyTypeIngress
		}
		if !ingress {
			continue
		}
		covered = true
		where := o.Source + " " + o.id()
		for i, r := range np.Spec.Ingress {
			if len(r.From) == 0 {
				probs = append(probs, Problem{where, fmt.Sprintf("ingress rule %d admits every source to the node daemon", i)})
			}
			for _, peer := range r.From {
				if peer.IPBlock != nil || peer.NamespaceSelector != nil || peer.PodSelector == nil {
					probs = append(probs, Problem{where, fmt.Sprintf("ingress rule %d admits more than the API tier's pods to the node daemon", i)})
					continue
				}
				ps2, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil {
					probs = append(probs, Problem{where, err.Error()})
					continue
				}
				for _, p := range selected(ps, ps2) {
					if p.o.id() != "Deployment/airlock-api" {
						probs = append(probs, Problem{where, fmt.Sprintf("ingress rule %d admits %s to the node daemon; only the API tier may call it", i, p.o.id())})
					}
				}
				if !ps2.Matches(labels.Set(apiPods[0].meta.Labels)) {
					probs = append(probs, Problem{where, fmt.Sprintf("ingress rule %d does not admit the API tier", i)})
				}
			}
			if len(r.Ports) == 0 {
				probs = append(probs, Problem{where, fmt.Sprintf("ingress rule %d opens every port of the node daemon", i)})
			}
		}
	}
	if !covered {
		probs = append(probs, Problem{node[0].o.Source + " " + node[0].o.id(), "no ingress NetworkPolicy selects the node daemon's pods: anything in the cluster could call it"})
	}
	return probs
}

// Stream validates one YAML stream holding a whole application, such as
// `kubectl kustomize` output.
func Stream(name string, data []byte) []Problem {
	objs, probs := Decode(name, data)
	return append(probs, Check(objs)...)
}

// checkNodeState: the node daemon's --state-dir is a host directory. It
// holds the node's SQLite store, its audit chain and anchor, and its
// cluster identity (epoch); on a volume that dies with the pod, every
// restart would start a new chain and a new identity.
func checkNodeState(ps []pod) []Problem {
	for _, p := range ps {
		if p.o.id() != PrivilegedWorkload {
			continue
		}
		where := p.o.Source + " " + p.o.id()
		vols := map[string]corev1.Volume{}
		for _, v := range p.spec.Volumes {
			vols[v.Name] = v
		}
		for _, c := range p.spec.Containers {
			dir := ""
			for _, a := range c.Args {
				if v, ok := strings.CutPrefix(a, "--state-dir="); ok {
					dir = v
				}
			}
			if dir == "" {
				return []Problem{{where, fmt.Sprintf("container %s: no --state-dir=DIR argument", c.Name)}}
			}
			for _, m := range c.VolumeMounts {
				if m.MountPath == dir {
					if vols[m.Name].HostPath == nil {
						return []Problem{{where, fmt.Sprintf("container %s: state directory %s is not a hostPath volume: its audit chain and node identity would die with the pod", c.Name, dir)}}
					}
					return nil
				}
			}
			return []Problem{{where, fmt.Sprintf("container %s: state directory %s is not a mounted volume: its audit chain and node identity would die with the pod", c.Name, dir)}}
		}
	}
	return nil
}

// listenFlags are airlock's flags that open a TCP listener.
var listenFlags = []string{"--listen", "--internal-listen", "--node-listen"}

// checkListenFlags: every port airlock is told to listen on is a port the
// container declares (or Services and probes aim at nothing), and the
// node's --cluster-api names a Service in the manifests by a port it
// has.
func checkListenFlags(objs []Object, ps []pod) []Problem {
	var probs []Problem
	for _, p := range ps {
		where := p.o.Source + " " + p.o.id()
		for _, c := range p.spec.Containers {
			for _, a := range c.Args {
				name, val, ok := strings.Cut(a, "=")
				if !ok {
					continue
				}
				for _, f := range listenFlags {
					if name != f {
						continue
					}
					_, port, err := net.SplitHostPort(val)
					n, err2 := strconv.Atoi(port)
					if err != nil || err2 != nil {
						probs = append(probs, Problem{where, fmt.Sprintf("container %s: %s=%s is not host:port", c.Name, f, val)})
					} else if !hasPort([]corev1.Container{c}, intstr.FromInt32(int32(n))) {
						probs = append(probs, Problem{where, fmt.Sprintf("container %s: %s listens on %d, which is not one of its ports", c.Name, f, n)})
					}
				}
				if name == "--cluster-api" {
					if msg := serviceURL(objs, val); msg != "" {
						probs = append(probs, Problem{where, fmt.Sprintf("container %s: --cluster-api=%s: %s", c.Name, val, msg)})
					}
				}
			}
		}
	}
	return probs
}

// serviceURL checks that u is http://SERVICE.NAMESPACE.svc[.cluster.local]:PORT
// for a Service in objs with that port; it returns what is wrong, or "".
func serviceURL(objs []Object, u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "http" || pu.Port() == "" {
		return "want http://SERVICE.NAMESPACE.svc:PORT"
	}
	parts := strings.Split(pu.Hostname(), ".")
	if len(parts) < 3 || parts[2] != "svc" {
		return "want http://SERVICE.NAMESPACE.svc:PORT"
	}
	for _, o := range objs {
		svc, ok := o.Obj.(*corev1.Service)
		if !ok || o.Name != parts[0] || o.NS != parts[1] {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if strconv.Itoa(int(sp.Port)) == pu.Port() {
				return ""
			}
		}
		return fmt.Sprintf("Service %s/%s has no port %s", parts[1], parts[0], pu.Port())
	}
	return fmt.Sprintf("no Service %s in namespace %s", parts[0], parts[1])
}
