package egress

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// CA is one sandbox's TLS-inspection authority (TLSInspect). Its
// certificate is installed in that sandbox's guest trust store; its key is
// generated here, lives only in this process's memory, and is never
// written anywhere. The proxy uses it to issue a leaf certificate per
// allowed name it terminates. Safe for concurrent use.
//
// One CA per sandbox, not per host: a guest that extracts nothing (it has
// no key) can at most trust certificates for its own connections, and a
// certificate issued for one sandbox is worthless to every other one.
type CA struct {
	cert    *x509.Certificate // immutable
	certPEM []byte            // immutable
	key     crypto.Signer     // immutable; never leaves the process

	mu     sync.Mutex
	leaves map[string]*tls.Certificate // guarded by mu; by normalized name
}

// maxLeaves bounds the leaf cache of one CA: names are policy-allowed, so
// a guest cannot make it grow without bound through wildcards alone.
const maxLeaves = 256

// NewCA makes a sandbox CA named after id, valid from an hour ago (guest
// clocks are pushed, but a little slack is cheap) for validFor.
func NewCA(id string, validFor time.Duration) (*CA, error) {
	if validFor <= 0 {
		return nil, fmt.Errorf("egress ca: validity must be positive")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("egress ca: key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "airlock egress inspection " + id, Organization: []string{"airlock"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true, // it signs leaves only, never another CA
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("egress ca: certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("egress ca: certificate: %w", err)
	}
	return &CA{cert: cert, key: key, leaves: map[string]*tls.Certificate{},
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// CertPEM is the CA certificate, PEM-encoded: what the guest trusts.
func (c *CA) CertPEM() []byte { return append([]byte(nil), c.certPEM...) }

// Certificate is the parsed CA certificate.
func (c *CA) Certificate() *x509.Certificate { return c.cert }

// Fingerprint is the SHA-256 of the certificate, hex, for audit records.
func (c *CA) Fingerprint() string { return fmt.Sprintf("%x", sha256.Sum256(c.cert.Raw)) }

// leaf returns a server certificate for name (normalized, policy-allowed),
// issued on first use and cached.
func (c *CA) leaf(name string) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.leaves[name]; ok && time.Now().Before(l.Leaf.NotAfter) {
		return l, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("egress ca: leaf key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    c.cert.NotBefore,
		NotAfter:     c.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("egress ca: leaf: %w", err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("egress ca: leaf: %w", err)
	}
	l := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: parsed}
	if len(c.leaves) >= maxLeaves {
		clear(c.leaves)
	}
	c.leaves[name] = l
	return l, nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(fmt.Sprintf("egress ca: serial: %v", err)) // crypto/rand never fails on Linux
	}
	return n.Add(n, big.NewInt(1))
}
