package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// FormatCheck is a check's summary line — PASS or FAIL, the check, its
// counts and duration — followed, for a failed check, by its failures:
// the message, the field that differs and the (smallest) failing object.
func FormatCheck(c Check) string {
	var b strings.Builder
	status := "PASS"
	if !c.Passed {
		status = "FAIL"
	}
	counts := fmt.Sprintf("%d cases", c.Cases)
	if c.Failed > 0 {
		counts = fmt.Sprintf("%d/%d cases failed", c.Failed, c.Cases)
	}
	if c.Note != "" {
		counts += ", " + c.Note
	}
	fmt.Fprintf(&b, "%s  %-60s %s (%s)\n", status, c.ID(), counts, roundDuration(c.Duration))
	if !c.Passed {
		b.WriteString(formatFailures(c, "      "))
	}
	return b.String()
}

func formatFailures(c Check, indent string) string {
	var b strings.Builder
	for i, f := range c.Failures {
		fmt.Fprintf(&b, "%s%s\n", indent, f.Message)
		if f.Field != "" {
			fmt.Fprintf(&b, "%s  field: %s\n", indent, f.Field)
		}
		if len(f.Explain) > 0 {
			fmt.Fprintf(&b, "%s  explain:\n", indent)
			for _, l := range f.Explain {
				fmt.Fprintf(&b, "%s  %s\n", indent, l)
			}
		}
		if f.Object != nil {
			label := "object:"
			if i == 0 && (c.Group == GroupRoundTrip || strings.HasPrefix(c.Name, "outputs ")) {
				label = "smallest failing object:"
			}
			fmt.Fprintf(&b, "%s  %s\n", indent, label)
			y, err := yaml.Marshal(withoutServerMetadata(f.Object))
			if err != nil {
				y = []byte(fmt.Sprint(f.Object))
			}
			for _, line := range strings.Split(strings.TrimRight(string(y), "\n"), "\n") {
				fmt.Fprintf(&b, "%s    %s\n", indent, line)
			}
		}
	}
	if more := c.Failed - len(c.Failures); more > 0 {
		fmt.Fprintf(&b, "%s(%d more failing cases)\n", indent, more)
	}
	return b.String()
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// Summary is the report's last line.
func (r *Report) Summary() string {
	passed, failed := r.Counts()
	verdict := "PASS"
	if failed > 0 {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s: %d checks, %d passed, %d failed — %s (seed %d, %d objects per version) in %s",
		verdict, passed+failed, passed, failed, r.Katalog, r.Seed, r.Count, roundDuration(r.Duration))
}

// WriteText writes every check's line (failures in detail) and the summary.
func (r *Report) WriteText(w io.Writer) error {
	for _, c := range r.Checks {
		if _, err := io.WriteString(w, FormatCheck(c)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}

// JUnit XML, the shape CI systems read: one testsuite per group.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the report as JUnit XML: a testsuite per group, a
// testcase per check, a failure element with the details of a failed one.
func (r *Report) WriteJUnit(w io.Writer) error {
	out := junitSuites{Name: "orkestra conformance " + r.Katalog, Time: seconds(r.Duration)}
	index := map[string]int{}
	for _, c := range r.Checks {
		i, ok := index[c.Group]
		if !ok {
			i = len(out.Suites)
			index[c.Group] = i
			out.Suites = append(out.Suites, junitSuite{Name: "conformance/" + c.Group, Properties: []junitProperty{
				{"katalog", r.Katalog}, {"seed", fmt.Sprint(r.Seed)}, {"count", fmt.Sprint(r.Count)},
			}})
		}
		s := &out.Suites[i]
		tc := junitCase{Name: c.Name, Classname: "conformance." + c.Group, Time: seconds(c.Duration)}
		tc.SystemOut = fmt.Sprintf("%d cases, %d failed. %s", c.Cases, c.Failed, c.Note)
		if !c.Passed {
			msg := fmt.Sprintf("%d/%d cases failed", c.Failed, c.Cases)
			if len(c.Failures) > 0 {
				msg = c.Failures[0].Message
			}
			tc.Failure = &junitFailure{Message: msg, Type: "ConformanceFailure", Text: formatFailures(c, "")}
			s.Failures++
			out.Failures++
		}
		s.Tests++
		out.Tests++
		d, _ := time.ParseDuration(s.Time + "s")
		s.Time = seconds(d + c.Duration)
		s.Cases = append(s.Cases, tc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
