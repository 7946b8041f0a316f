package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The program is assembled in one place: among the command's own files
// only the builder (app_engine.go) calls engine.New or pipeline.NewManager,
// so a command cannot grow its own copy of the assembly again.
func TestOneBuilderAssemblesTheProgram(t *testing.T) {
	owner := map[string]string{"engine.New": "app_engine.go", "pipeline.NewManager": "app.go"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := pkg.Name + "." + sel.Sel.Name
			want, watched := owner[name]
			if !watched {
				return true
			}
			seen[name] = true
			if f != want {
				t.Errorf("%s calls %s: the program is assembled only by the builder (%s); ask it with app.build or app.manager", fset.Position(call.Pos()), name, want)
			}
			return true
		})
	}
	for name, f := range owner {
		if !seen[name] {
			t.Errorf("%s no longer calls %s: update this test to where the program is assembled", f, name)
		}
	}
}
