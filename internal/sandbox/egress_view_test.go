package sandbox

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
)

// TestProxyViewCredentialRule: a rule marked Credential becomes the
// tenant's route when there is one, and refuses the policy (never plain
// egress) when there is none, or when the route is another tenant's; the
// refusal never quotes the route's secret.
func TestProxyViewCredentialRule(t *testing.T) {
	const secret = "Basic c2VjcmV0LXVzZXI6cGFzcw=="
	m := &Manager{cfg: Config{Credentials: map[string][]egress.CredentialRoute{
		"acme": {{Name: "dav", Host: "dav.internal", Upstream: "https://dav.example.com/reports", Header: "Authorization", Value: secret}},
	}}}
	rule := func(domain string) netpool.Policy {
		return netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{{Name: "publish", Domain: domain, Credential: true}}}
	}
	sb, err := m.proxyView("acme", rule("DAV.internal."))
	if err != nil {
		t.Fatalf("route host: %v", err)
	}
	if len(sb.Routes) != 1 || sb.Routes[0].Name != "publish" || len(sb.Domains) != 0 {
		t.Fatalf("route host: view %+v, want the one route named after the rule", sb)
	}
	for _, c := range []struct{ tenant, domain string }{{"acme", "other.internal"}, {"globex", "dav.internal"}} {
		_, err := m.proxyView(c.tenant, rule(c.domain))
		if !errdefs.IsFailedPrecondition(err) {
			t.Fatalf("%s %s: err %v, want failed_precondition", c.tenant, c.domain, err)
		}
		if strings.Contains(err.Error(), "c2VjcmV0") || !strings.Contains(err.Error(), "not a credential route") {
			t.Errorf("%s %s: error %q", c.tenant, c.domain, err)
		}
	}
	// Without Credential the same name is a plain domain rule, as before.
	plain := rule("other.internal")
	plain.Allow[0].Credential = false
	if sb, err := m.proxyView("acme", plain); err != nil || len(sb.Domains) != 1 {
		t.Fatalf("plain rule: %+v, %v", sb, err)
	}
}
