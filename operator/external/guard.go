package external

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// Where a call may go is checked at every connection, on the address the
// dialer is about to connect to — the DNS answer, not the name — so a name
// that resolves (or re-resolves) to an internal address is refused too.

// alwaysRefused are ranges no flag opens: link-local addresses (where
// cloud metadata services answer, 169.254.169.254 among them), the
// providers' other metadata addresses, and addresses that are no host.
var alwaysRefused = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local, AWS/GCP/Azure/OpenStack metadata
	netip.MustParsePrefix("fe80::/10"),          // link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS metadata over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("192.0.0.192/32"),     // Oracle Cloud metadata
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network"
	netip.MustParsePrefix("::/128"),             // unspecified
	netip.MustParsePrefix("224.0.0.0/4"),        // multicast
	netip.MustParsePrefix("ff00::/8"),           // multicast
	netip.MustParsePrefix("255.255.255.255/32"),
}

// internal are ranges refused unless --external-allow lists them:
// loopback, private networks (a cluster's Pod and Service addresses among
// them), shared address space.
var internal = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("fc00::/7"),
}

// RefusedError says why an address was refused.
type RefusedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("address %s is refused: %s", e.Addr, e.Reason)
}

// guard decides which addresses calls may connect to.
type guard struct {
	allow []netip.Prefix
}

// check returns nil when addr may be connected to.
func (g *guard) check(addr netip.Addr) error {
	addr = addr.Unmap()
	for _, p := range alwaysRefused {
		if p.Contains(addr) {
			return &RefusedError{Addr: addr, Reason: "link-local, cloud metadata and non-host addresses are never called"}
		}
	}
	for _, p := range internal {
		if !p.Contains(addr) {
			continue
		}
		for _, a := range g.allow {
			if a.Contains(addr) {
				return nil
			}
		}
		return &RefusedError{Addr: addr, Reason: fmt.Sprintf("it is in %s (loopback or private); the operator calls it only when --external-allow lists a range holding it", p)}
	}
	return nil
}

// control is the dialer's Control hook: it runs after name resolution,
// before connecting, for every address tried.
func (g *guard) control(_ context.Context, _ string, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("connecting to %q: not an IP address", address)
	}
	return g.check(addr)
}

// ParseAllow parses --external-allow values: CIDR ranges or single
// addresses.
func ParseAllow(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if p, err := netip.ParsePrefix(part); err == nil {
				out = append(out, p.Masked())
				continue
			}
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("--external-allow %q is not a CIDR range (10.96.0.0/12) or an address (127.0.0.1)", part)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out, nil
}

// hostAllowed reports whether host matches one of the katalog's
// allowedHosts (exact, or *.suffix for names below suffix); nil allows any.
func hostAllowed(host string, allowed []string) bool {
	if allowed == nil {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range allowed {
		if suffix, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == a {
			return true
		}
	}
	return false
}
