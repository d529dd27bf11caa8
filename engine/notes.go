package engine

import "github.com/orkspace/orkestra-cel/katalog"

// NotesBackend is a legacy backend that takes the katalog's user-defined
// template functions (top-level `notes:`). Compile gives them to it once,
// before compiling anything, and compiles with the backend it returns.
type NotesBackend interface {
	WithNotes(notes []*katalog.Note) (LegacyBackend, katalog.Diagnostics)
}
