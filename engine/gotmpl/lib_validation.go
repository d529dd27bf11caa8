package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The format checks (upstream pkg/note/validation.go,
// kube_validation.go, net.go): each reports whether a string has a shape,
// never failing.

var validationFamily = family{name: "validation (true or false, never an error)", functions: []*function{
	noteFunction("isValidEmail", notes.IsValidEmail, argString, 0, "`isValidEmail` (a bare address)"),
	noteFunction("isValidGitRepository", notes.IsValidGitRepository, argString, 0, "`isValidGitRepository` (`https://`, `git://`, `ssh://` or `user@host:path`)"),
	noteFunction("isValidURL", notes.IsValidURL, argString, 0, "`isValidURL` (absolute http or https with a host)"),
	noteFunction("isValidImageRef", notes.IsValidImageRef, argString, 0, "`isValidImageRef` (`[registry[:port]/]path[:tag\\|@digest]`, lower case)"),
	noteFunction("isValidJSON", notes.IsValidJSON, argString, 0, "`isValidJSON`"),
	noteFunction("isValidPort", notes.IsValidPort, argString, 0, "`isValidPort` (a string from 1 to 65535)"),
	noteFunction("isDNS1123Subdomain", notes.IsDNS1123Subdomain, argString, 0, "`isDNS1123Subdomain`"),
	noteFunction("isValidLabelKey", notes.IsValidLabelKey, argString, 0, "`isValidLabelKey`"),
	noteFunction("isValidAnnotationKey", notes.IsValidAnnotationKey, argString, 0, "`isValidAnnotationKey`"),
	noteFunction("isValidLabelValue", notes.IsValidLabelValue, argString, 0, "`isValidLabelValue` (`\"\"` is valid; Kubernetes' own rules)"),
	noteFunction("ipValid", notes.IPValid, argString, 0, "`ipValid` (IPv4 or IPv6)"),
	noteFunction("ipIsPrivate", notes.IPIsPrivate, argString, 0, "`ipIsPrivate` (10/8, 172.16/12, 192.168/16, fc00::/7)"),
	noteFunction("cidrContains", notes.CIDRContains, argStrings2, 0, "`cidrContains CIDR IP` (false when either is malformed)"),
}}
