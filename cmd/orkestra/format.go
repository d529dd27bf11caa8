package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// checkFormats are the outputs of `check --format`.
var checkFormats = []string{"text", "json", "sarif", "github"}

// ruleCategories name a finding's rule by where it is: the first segment of
// its field path (indexes dropped), else the katalog itself. They are the
// SARIF rule ids and the GitHub annotation titles, so they stay stable.
var ruleCategories = map[string]string{
	"apiVersion": "katalog", "kind": "katalog", "metadata": "katalog", "spec": "katalog", "imports": "compose", "sources": "compose", "notes": "notes", "gateway": "katalog",
	"apiTypes": "schema", "crdFile": "schema", "crFiles": "files", "namespaced": "schema",
	"operatorBox": "reconcile", "reconciler": "reconcile", "workers": "settings", "resync": "settings", "queue": "settings",
	"conversion": "conversion", "validation": "admission", "mutation": "admission", "admission": "admission", "security": "admission",
	"allowedNamespaces": "namespaces", "restrictedNamespaces": "namespaces", "namespace": "namespaces", "dependsOn": "dependencies",
	"deprecated": "lifecycle", "deprecationWarning": "lifecycle",
}

var indexRe = regexp.MustCompile(`\[[^\]]*\]`)

// ruleID is the stable id of a finding's rule: orkestra/<category>.
func ruleID(d katalog.Diagnostic) string {
	head := strings.SplitN(indexRe.ReplaceAllString(d.Field, ""), ".", 2)[0]
	if c, ok := ruleCategories[head]; ok {
		return "orkestra/" + c
	}
	if head == "" {
		return "orkestra/katalog"
	}
	return "orkestra/other"
}

// finding is one diagnostic in the machine-readable formats.
type finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Entry    string `json:"entry,omitempty"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
	// Reason is why the katalog accepts an acknowledged finding.
	Reason string `json:"reason,omitempty"`
}

func findings(diags katalog.Diagnostics) []finding {
	out := make([]finding, 0, len(diags))
	for _, d := range sortedDiagnostics(diags) {
		sev := "error"
		switch d.Severity {
		case katalog.Warning:
			sev = "warning"
		case katalog.Acknowledged:
			sev = "acknowledged"
		}
		out = append(out, finding{Rule: ruleID(d), Severity: sev, File: d.Pos.File, Line: d.Pos.Line, Column: d.Pos.Col, Entry: d.Entry, Field: d.Field, Message: d.Message, Reason: d.Reason})
	}
	return out
}

// writeFindings writes diagnostics (and, when the katalog compiled, the
// summary) in format.
func writeFindings(w io.Writer, format string, diags katalog.Diagnostics, summary string) error {
	fs := findings(diags)
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			OK       bool      `json:"ok"`
			Summary  string    `json:"summary,omitempty"`
			Findings []finding `json:"findings"`
		}{OK: !diags.HasErrors(), Summary: summary, Findings: fs})
	case "sarif":
		return json.NewEncoder(w).Encode(sarif(fs))
	case "github":
		for _, f := range fs {
			cmd := f.Severity
			if cmd == "acknowledged" {
				cmd = "notice"
			}
			fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", cmd, ghProp(f.File), max(f.Line, 1), max(f.Column, 1), ghProp(f.Rule), ghData(findingText(f)))
		}
		if summary != "" {
			fmt.Fprintln(w, summary)
		}
		return nil
	}
	return fmt.Errorf("unknown format %q; use one of %s", format, strings.Join(checkFormats, ", "))
}

func findingText(f finding) string {
	var b strings.Builder
	if f.Entry != "" {
		b.WriteString("[" + f.Entry + "] ")
	}
	if f.Field != "" {
		b.WriteString(f.Field + ": ")
	}
	b.WriteString(f.Message)
	if f.Reason != "" {
		fmt.Fprintf(&b, " (mayFail: %q)", f.Reason)
	}
	return b.String()
}

// GitHub workflow command escaping: data escapes %, CR, LF; properties
// also : and ,.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// sarif is a SARIF 2.1.0 log of one run.
func sarif(fs []finding) map[string]any {
	var ids []string
	seen := map[string]bool{}
	results := make([]any, 0, len(fs))
	for _, f := range fs {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			ids = append(ids, f.Rule)
		}
		region := map[string]any{}
		if f.Line > 0 {
			region["startLine"] = f.Line
			if f.Column > 0 {
				region["startColumn"] = f.Column
			}
		}
		loc := map[string]any{"artifactLocation": map[string]any{"uri": filepath.ToSlash(f.File)}}
		if len(region) > 0 {
			loc["region"] = region
		}
		result := map[string]any{
			"ruleId":    f.Rule,
			"level":     map[string]string{"error": "error", "warning": "warning", "acknowledged": "note"}[f.Severity],
			"message":   map[string]any{"text": findingText(f)},
			"locations": []any{map[string]any{"physicalLocation": loc}},
		}
		if f.Reason != "" {
			// An acknowledged finding is suppressed in the source, with
			// its justification: code scanning lists it as such.
			result["suppressions"] = []any{map[string]any{"kind": "inSource", "justification": f.Reason}}
		}
		results = append(results, result)
	}
	sort.Strings(ids)
	rules := make([]any, 0, len(ids))
	for _, id := range ids {
		rules = append(rules, map[string]any{"id": id, "shortDescription": map[string]any{"text": "katalog " + strings.TrimPrefix(id, "orkestra/") + " problems"}})
	}
	return map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "orkestra", "informationUri": "https://github.com/orkspace/orkestra-cel", "version": version, "rules": rules}},
			"results": results,
		}},
	}
}
