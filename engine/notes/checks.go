package notes

import (
	"encoding/json"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The format checks of the original library (the catalog's validation,
// kubevalidation and net entries): each reports whether a string has a
// shape, never failing.

// IsValidEmail: a bare address, not "Name <address>".
func IsValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == strings.TrimSpace(s)
}

var (
	gitURL = regexp.MustCompile(`^(https?|git|ssh)://\S+$`)
	gitSCP = regexp.MustCompile(`^[\w.-]+@[\w.-]+:[\w./~-]+$`)
)

// IsValidGitRepository: an http(s)://, git:// or ssh:// URL, or the
// scp-like user@host:path — a shape, not a reachable remote.
func IsValidGitRepository(s string) bool { return gitURL.MatchString(s) || gitSCP.MatchString(s) }

// IsValidURL: an absolute http or https URL with a host.
func IsValidURL(s string) bool {
	u, err := url.ParseRequestURI(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// imageRef: [registry[:port]/]lower-case path components[:tag|@algo:hex].
var imageRef = regexp.MustCompile(`^` +
	`(?:[a-z0-9]+(?:[.-][a-z0-9]+)*(?::\d+)?/)?` + // registry and port
	`[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*` + // path
	`(?::\w[\w.-]{0,127}|@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?$`) // tag or digest

// IsValidImageRef: a container image reference as the common mistakes (a
// space, an upper-case letter) show; not the whole OCI grammar.
func IsValidImageRef(s string) bool { return imageRef.MatchString(s) }

// IsValidJSON: syntactically valid JSON.
func IsValidJSON(s string) bool { return json.Valid([]byte(s)) }

// IsValidPort: a decimal integer from 1 to 65535.
func IsValidPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}

// IsDNS1123Subdomain: lower-case alphanumeric labels with "-", joined by
// ".", at most 253 characters (an object name).
func IsDNS1123Subdomain(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// IsValidLabelKey and IsValidAnnotationKey: [prefix/]name, the prefix a
// DNS subdomain, the name at most 63 alphanumeric characters with "-", "_"
// and "." inside.
func IsValidLabelKey(s string) bool      { return len(validation.IsQualifiedName(s)) == 0 }
func IsValidAnnotationKey(s string) bool { return len(validation.IsQualifiedName(s)) == 0 }

// IsValidLabelValue: empty, or at most 63 alphanumeric characters with "-",
// "_" and "." inside.
func IsValidLabelValue(s string) bool { return len(validation.IsValidLabelValue(s)) == 0 }

// IPValid: an IPv4 or IPv6 address.
func IPValid(s string) bool { return net.ParseIP(s) != nil }

// IPIsPrivate: in 10/8, 172.16/12, 192.168/16 or fc00::/7.
func IPIsPrivate(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.IsPrivate()
}

// CIDRContains: ip lies in cidr; false when either is malformed.
func CIDRContains(cidr, ip string) bool {
	_, n, err := net.ParseCIDR(cidr)
	a := net.ParseIP(ip)
	return err == nil && a != nil && n.Contains(a)
}
