package spec

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/durabox/durabox/abi"
)

var update = flag.Bool("update", false, "rewrite abi/codec_gen.go and the field tables of abi/ABI.md from the table")

// TestGeneratedFilesAreCurrent holds the codec and ABI.md's field tables to
// the table: each must be what the table generates.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	t.Parallel()
	code, err := Code()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := Document(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{{"../../codec_gen.go", code}, {"../../ABI.md", tables}} {
		if *update {
			if err := os.WriteFile(f.path, f.want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, f.want) {
			t.Errorf("%s is not what the table in abi/internal/spec generates: run go test ./internal/spec -update (in abi/, a module of its own)", f.path)
		}
	}
}

// TestEveryFieldIsInTheTable checks the table against the Go types: every
// field of every message is in it, with the Go type its kind holds, and
// field numbers are unique.
func TestEveryFieldIsInTheTable(t *testing.T) {
	t.Parallel()
	types := map[string]any{
		"Activation": abi.Activation{}, "Job": abi.Job{}, "ActivationResult": abi.ActivationResult{}, "Command": abi.Command{},
		"RetryPolicy": abi.RetryPolicy{}, "Failure": abi.Failure{}, "Manifest": abi.Manifest{}, "ActivityRequest": abi.ActivityRequest{}, "ActivityResult": abi.ActivityResult{},
		"HTTPRequest": abi.HTTPRequest{}, "HTTPResponse": abi.HTTPResponse{}, "QueryRequest": abi.QueryRequest{}, "QueryResult": abi.QueryResult{},
	}
	// Fields that never travel: Activation.Patches reach a wasm guest
	// through the patched import (ABI.md, "Patches").
	notEncoded := []string{"Activation.Patches"}
	for _, m := range Messages {
		typ := reflect.TypeOf(types[m.Name])
		if typ == nil {
			t.Fatalf("message %s: no such type in package abi (add it to this test)", m.Name)
		}
		seen := map[int]bool{}
		covered := map[string]bool{}
		for _, f := range m.Fields {
			if seen[f.Num] {
				t.Errorf("%s: field number %d twice", m.Name, f.Num)
			}
			seen[f.Num] = true
			covered[f.Go] = true
			sf, ok := typ.FieldByName(f.Go)
			if !ok {
				t.Errorf("%s.%s: no such Go field", m.Name, f.Go)
				continue
			}
			if want := goType(f); sf.Type.String() != want {
				t.Errorf("%s.%s: the Go field is %s, the table's kind holds %s", m.Name, f.Go, sf.Type, want)
			}
		}
		for i := range typ.NumField() {
			name := m.Name + "." + typ.Field(i).Name
			if !covered[typ.Field(i).Name] && !slices.Contains(notEncoded, name) {
				t.Errorf("%s is not in the table", name)
			}
		}
	}
}

// goType is the Go type that holds a field of f's kind.
func goType(f Field) string {
	switch f.Kind {
	case Uint:
		if f.GoType == "" {
			return "uint64"
		}
		if strings.HasPrefix(f.GoType, "uint") || f.GoType == "int" {
			return f.GoType
		}
		return "abi." + f.GoType
	case Sint:
		return "int64"
	case Bool, Flag:
		return "bool"
	case String:
		return "string"
	case Bytes:
		return "[]uint8"
	case Nested:
		return "*abi." + f.GoType
	case RepeatedString:
		return "[]string"
	}
	return "[]abi." + f.GoType
}

// TestEnumsAreTheConstants checks each enumeration in the table against
// the constants of abi/message.go: Enum[i] is the constant
// Prefix+Enum[i] = i+1, and there are no others of its type.
func TestEnumsAreTheConstants(t *testing.T) {
	t.Parallel()
	file, err := parser.ParseFile(token.NewFileSet(), "../../message.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]map[string]int{} // type -> name -> value
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			id, ok := v.Type.(*ast.Ident)
			if !ok || len(v.Values) != 1 {
				continue
			}
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok {
				continue
			}
			n, err := strconv.Atoi(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			if consts[id.Name] == nil {
				consts[id.Name] = map[string]int{}
			}
			consts[id.Name][v.Names[0].Name] = n
		}
	}
	for _, m := range Messages {
		for _, f := range m.Fields {
			if len(f.Enum) == 0 {
				continue
			}
			want := map[string]int{}
			for i, name := range f.Enum {
				want[strings.TrimSuffix(f.GoType, "Kind")+name] = i + 1
			}
			if !reflect.DeepEqual(consts[f.GoType], want) {
				t.Errorf("%s.%s: the table's values are %v, abi/message.go's constants of %s are %v", m.Name, f.Name, want, f.GoType, consts[f.GoType])
			}
		}
	}
}
