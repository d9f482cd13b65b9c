package query

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokenKind is the kind of a token.
type tokenKind uint8

const (
	tEOF tokenKind = iota
	tIdent
	tString
	tNumber
	tOp     // = != <> < <= > >=
	tLParen // (
	tRParen // )
	tComma  // ,
)

// token is one token of the text, at byte offset pos.
type token struct {
	kind tokenKind
	text string // the identifier, operator or number as written; a string's value
	pos  int
}

// describe names the token in an error.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end"
	case tString:
		return "the string " + quote(t.text)
	default:
		return quote(t.text)
	}
}

// quote quotes s for an error, cut short.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// lex splits text into tokens, ending with a tEOF.
func lex(text string) ([]token, error) {
	var out []token
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',':
			kind := map[byte]tokenKind{'(': tLParen, ')': tRParen, ',': tComma}[c]
			out = append(out, token{kind: kind, text: string(c), pos: i})
			i++
		case c == '=':
			out = append(out, token{kind: tOp, text: "=", pos: i})
			i++
		case c == '!' || c == '<' || c == '>':
			op := string(c)
			if i+1 < len(text) && (text[i+1] == '=' || c == '<' && text[i+1] == '>') {
				op += string(text[i+1])
			}
			if op == "!" {
				return nil, errorAt(i, "found \"!\" alone; write != for \"not equal\", or NOT before a condition")
			}
			if op == "<>" {
				out = append(out, token{kind: tOp, text: "!=", pos: i})
			} else {
				out = append(out, token{kind: tOp, text: op, pos: i})
			}
			i += len(op)
		case c == '"' || c == '\'':
			s, n, err := lexString(text, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tString, text: s, pos: i})
			i += n
		case c == '-' || c >= '0' && c <= '9':
			n := lexNumber(text[i:])
			out = append(out, token{kind: tNumber, text: text[i : i+n], pos: i})
			i += n
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(text) && isNameByte(text[j]) {
				j++
			}
			out = append(out, token{kind: tIdent, text: text[i:j], pos: i})
			i = j
		default:
			r, _ := utf8.DecodeRuneInString(text[i:])
			return nil, errorAt(i, "found %q, which begins nothing in a filter: a filter is made of names, values, comparisons (= != < <= > >=), AND, OR, NOT, IN, IS SET and parentheses", r)
		}
	}
	return append(out, token{kind: tEOF, pos: len(text)}), nil
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lexString reads the string that begins at text[start] (a quote), and
// returns its value and its length in text.
func lexString(text string, start int) (string, int, error) {
	q := text[start]
	var b strings.Builder
	for i := start + 1; i < len(text); i++ {
		switch c := text[i]; {
		case c == q:
			return b.String(), i + 1 - start, nil
		case c == '\\':
			if i+1 == len(text) {
				break
			}
			i++
			switch e := text[i]; e {
			case '"', '\'', '\\':
				b.WriteByte(e)
			default:
				return "", 0, errorAt(i-1, "found the escape \\%c in a string; a string knows \\\", \\' and \\\\ only", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errorAt(start, "the string that begins here has no closing %c", q)
}

// lexNumber returns the length of the number (or of what looks like one,
// which the parser refuses) at the start of s.
func lexNumber(s string) int {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c == '.' || isNameByte(c):
		case (c == '+' || c == '-') && (s[i-1] == 'e' || s[i-1] == 'E'):
		default:
			return i
		}
		i++
	}
	return i
}
