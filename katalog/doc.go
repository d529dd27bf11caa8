// Package katalog loads katalogs: the YAML documents (kind Katalog, Komposer,
// and the Motif fragments they import) that declare an operator — CRD entries,
// what each reconciles into, status fields, conversion paths — into typed
// values with a source position on every value.
//
// Loading never evaluates anything. It decodes the keys of the original
// Orkestra format and this runtime's (the key tables in keys.go, load.go and
// upstream.go say which keys exist and how an unimplemented one is reported),
// composes imported files, finds each entry's CRD (crdFile, --crd, the
// cluster, a built-in kind, or an untyped stand-in: schemas.go) and reports
// every problem as a Diagnostic with file:line:col. The engine package then
// compiles what Load returns.
package katalog
