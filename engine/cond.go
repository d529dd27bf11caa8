package engine

import (
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// allOf holds when every part holds (`when:` lists); anyOf when one does (`or:`).
type allOf struct {
	parts []Condition
	pos   katalog.Pos
}

func (a *allOf) Eval(s *Scope) (bool, error) {
	for _, p := range a.parts {
		ok, err := p.Eval(s)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (a *allOf) Source() string   { return joinSources(a.parts, " && ") }
func (a *allOf) Pos() katalog.Pos { return a.pos }

type anyOf struct {
	parts []Condition
	pos   katalog.Pos
}

func (a *anyOf) Eval(s *Scope) (bool, error) {
	for _, p := range a.parts {
		ok, err := p.Eval(s)
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func (a *anyOf) Source() string   { return joinSources(a.parts, " || ") }
func (a *anyOf) Pos() katalog.Pos { return a.pos }

func joinSources(parts []Condition, sep string) string {
	srcs := make([]string, len(parts))
	for i, p := range parts {
		srcs[i] = "(" + p.Source() + ")"
	}
	return strings.Join(srcs, sep)
}
