// Command check-status reads task check scripts, one JSON object per line
// ({"id": "...", "script": "..."}), and prints one JSON object per statement
// whose failure the check would ignore ({"id", "line", "statement"}).
//
// A check answers "already done" with its exit status, which is its last
// command's: a statement before the last that fails unnoticed lets the check
// say done when it is not (the real-cluster tier's run 37: three lines of
// which only the last, `systemctl is-active`, decided, so a running old
// kubelet counted as upgraded). A script that starts with `set -e` stops at
// any failure; otherwise each statement before the last must be guarded
// (`… || exit N`), decide through a flag or an exit of its own (if, case, a
// loop that sets a variable or exits), or be one that cannot mislead
// (assignments, set, trap).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

type script struct {
	ID     string `json:"id"`
	Script string `json:"script"`
}

type finding struct {
	ID        string `json:"id"`
	Line      uint   `json:"line"`
	Statement string `json:"statement"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "check-status:", err)
		os.Exit(2)
	}
}

func run(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	parser := syntax.NewParser(syntax.Variant(syntax.LangPOSIX))
	for {
		var s script
		if err := dec.Decode(&s); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		file, err := parser.Parse(strings.NewReader(s.Script), s.ID)
		if err != nil {
			return err
		}
		for _, f := range unguarded(file, s.Script) {
			f.ID = s.ID
			if err := enc.Encode(f); err != nil {
				return err
			}
		}
	}
}

// unguarded lists the top-level statements before the last whose failure
// the script's exit status would not show.
func unguarded(file *syntax.File, text string) []finding {
	stmts := file.Stmts
	if len(stmts) < 2 || setsErrexit(stmts[0]) {
		return nil
	}
	c := checker{exiting: map[string]bool{"exit": true}}
	var found []finding
	for _, st := range stmts[:len(stmts)-1] {
		if !c.decides(st) {
			found = append(found, finding{Line: st.Pos().Line(), Statement: firstLine(text, st)})
		}
	}
	return found
}

// setsErrexit: `set -e…` (any flag group holding e).
func setsErrexit(st *syntax.Stmt) bool {
	args := callArgs(st)
	if len(args) < 2 || args[0] != "set" {
		return false
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") && strings.Contains(a, "e") {
			return true
		}
	}
	return false
}

// checker knows the script's functions that end the script (`fail() { …; exit 2; }`), as they are defined.
type checker struct {
	exiting map[string]bool
}

// harmless: builtins that only set the shell's own state.
var harmless = map[string]bool{"set": true, "trap": true, ":": true, "export": true, "readonly": true, "unset": true}

// decides: the statement's failure cannot go unnoticed, or it has no failure to notice.
func (c checker) decides(st *syntax.Stmt) bool {
	if st.Negated || st.Background {
		return false
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.FuncDecl:
		if cmd.Body != nil && c.exits(cmd.Body) {
			c.exiting[cmd.Name.Value] = true
		}
		return true // a definition runs nothing
	case *syntax.BinaryCmd:
		return cmd.Op == syntax.OrStmt && c.exits(cmd.Y)
	case *syntax.CallExpr:
		if len(cmd.Args) == 0 {
			return true // only assignments: the value is tested later
		}
		args := callArgs(st)
		return len(args) > 0 && harmless[args[0]]
	case *syntax.IfClause, *syntax.CaseClause:
		return c.exitsWithin(cmd)
	case *syntax.ForClause, *syntax.WhileClause:
		return c.exitsWithin(cmd) || assignsWithin(cmd)
	}
	return false
}

// exits: the statement is `exit …` or a call of a function that exits, or a group whose last statement is.
func (c checker) exits(st *syntax.Stmt) bool {
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		args := callArgs(st)
		return len(args) > 0 && c.exiting[args[0]]
	case *syntax.Block:
		return len(cmd.Stmts) > 0 && c.exits(cmd.Stmts[len(cmd.Stmts)-1])
	case *syntax.Subshell:
		return false // an exit there leaves only the subshell
	}
	return false
}

func (c checker) exitsWithin(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 && c.exiting[call.Args[0].Lit()] {
			found = true
		}
		_, sub := n.(*syntax.Subshell)
		return !found && !sub
	})
	return found
}

func assignsWithin(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Assigns) > 0 && len(call.Args) == 0 {
			found = true
		}
		return !found
	})
	return found
}

// callArgs: a simple command's words that are plain literals ("" for others).
func callArgs(st *syntax.Stmt) []string {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	args := make([]string, len(call.Args))
	for i, w := range call.Args {
		args[i] = w.Lit()
	}
	return args
}

func firstLine(text string, st *syntax.Stmt) string {
	from, to := st.Pos().Offset(), st.End().Offset()
	if int(to) > len(text) {
		to = uint(len(text))
	}
	s := text[from:to]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
