package docs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// A Doc is a Markdown document as the doc tests read it.
type Doc struct {
	// Path is the document's path, relative to the repository's root,
	// with slashes.
	Path   string
	Source []byte
	// Anchors are the anchors of its headings, as GitHub makes them.
	Anchors []string
	Links   []Piece
	// Code holds every code span and every line of every code block;
	// Block tells which.
	Code []Piece
	// Text holds every paragraph, heading and table cell, on one line.
	Text []Piece
}

// A Piece is a part of a document, and the line it starts on.
type Piece struct {
	Text  string
	Line  int
	Block bool
}

func (p Piece) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Text) }

var markdown = goldmark.New(goldmark.WithExtensions(extension.Table))

// Read reads and parses the document at path, relative to root.
func Read(root, path string) (*Doc, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return nil, fmt.Errorf("docs: %w", err)
	}
	d := &Doc{Path: path, Source: src}
	tree := markdown.Parser().Parse(text.NewReader(src))
	seen := map[string]int{}
	err = ast.Walk(tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			d.Anchors = append(d.Anchors, anchor(plain(n, src), seen))
			d.Text = append(d.Text, d.piece(inline(n, src), n))
		case *ast.Paragraph, *ast.TextBlock, *extast.TableCell:
			d.Text = append(d.Text, d.piece(inline(n, src), n))
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				d.Code = append(d.Code, Piece{Text: strings.TrimRight(string(seg.Value(src)), "\n"), Line: d.line(seg.Start), Block: true})
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			d.Code = append(d.Code, d.piece(spanText(n, src), n))
		case *ast.Link:
			d.Links = append(d.Links, d.piece(string(n.Destination), n))
		case *ast.Image:
			d.Links = append(d.Links, d.piece(string(n.Destination), n))
		}
		return ast.WalkContinue, nil
	})
	return d, err
}

// Lines returns the number of lines of the document.
func (d *Doc) Lines() int { return bytes.Count(d.Source, []byte("\n")) }

// HasAnchor reports whether one of the document's headings has anchor a.
func (d *Doc) HasAnchor(a string) bool { return slices.Contains(d.Anchors, a) }

func (d *Doc) piece(s string, n ast.Node) Piece { return Piece{Text: s, Line: d.line(start(n))} }

// line returns the line of the byte at offset.
func (d *Doc) line(offset int) int { return bytes.Count(d.Source[:offset], []byte("\n")) + 1 }

// start returns the offset where n's text starts: its first line's, or
// its first child's.
func start(n ast.Node) int {
	for ; n != nil; n = n.FirstChild() {
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
		if p := n.Pos(); p >= 0 && n.Type() == ast.TypeInline {
			return p
		}
	}
	return 0
}

// inline returns the text of n's inline children on one line, code spans
// between backticks.
func inline(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.CodeSpan:
			b.WriteString("`" + spanText(c, src) + "`")
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			b.Write(c.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// spanText returns the text of a code span, a line break in it a space.
func spanText(n *ast.CodeSpan, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Value(src))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}

// plain returns n's text without markup: what GitHub makes its anchor
// from.
func plain(n ast.Node, src []byte) string {
	return strings.ReplaceAll(inline(n, src), "`", "")
}

// anchor returns the anchor GitHub gives a heading: lower case, letters,
// digits, hyphens and underscores kept, spaces made hyphens, the rest
// dropped; a repeated one numbered (-1, -2, …) in order.
func anchor(heading string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	a := b.String()
	if n := seen[a]; n > 0 {
		seen[a]++
		return fmt.Sprintf("%s-%d", a, n)
	}
	seen[a] = 1
	return a
}
