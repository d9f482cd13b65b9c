package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/abi"
)

// SetAttributes writes search attributes of an instance: each replaces the
// attribute of its name, and one without a type (removed) only deletes it
// (TurnTx, ResetTx).
func (t Tx) SetAttributes(ctx context.Context, id string, attrs []abi.Attribute) error {
	for _, a := range attrs {
		if err := t.send(ctx, `DELETE FROM instance_attributes WHERE instance_id = ? AND name = ?`, id, a.Name); err != nil {
			return fmt.Errorf("search attribute %s: %w", a.Name, err)
		}
		for _, row := range attributeRows(a) {
			if err := t.send(ctx, `INSERT INTO instance_attributes (instance_id, name, type, str, num, ival) VALUES (?, ?, ?, ?, ?, ?)`,
				id, a.Name, string(a.Type), row.str, row.num, row.ival); err != nil {
				return fmt.Errorf("search attribute %s: %w", a.Name, err)
			}
		}
	}
	return nil
}

// ClearAttributes deletes every search attribute of an instance.
func (t Tx) ClearAttributes(ctx context.Context, id string) error {
	return t.send(ctx, `DELETE FROM instance_attributes WHERE instance_id = ?`, id)
}

// attributeRow is one row of instance_attributes: the columns the
// attribute's type fills (the schema's comment says which).
type attributeRow struct {
	str  *string
	num  *float64
	ival *int64
}

// attributeRows returns the rows of an attribute: none for a removal, one
// per element for a keyword list, else one.
func attributeRows(a abi.Attribute) []attributeRow {
	switch a.Type {
	case abi.AttributeString:
		return []attributeRow{{str: &a.String}}
	case abi.AttributeKeywords:
		rows := make([]attributeRow, len(a.Keywords))
		for i := range a.Keywords {
			rows[i] = attributeRow{str: &a.Keywords[i]}
		}
		return rows
	case abi.AttributeInt:
		f := float64(a.Int)
		return []attributeRow{{num: &f, ival: &a.Int}}
	case abi.AttributeFloat:
		return []attributeRow{{num: &a.Float}}
	case abi.AttributeBool:
		var b int64
		if a.Bool {
			b = 1
		}
		return []attributeRow{{ival: &b}}
	case abi.AttributeTime:
		n := Nanos(a.Time)
		return []attributeRow{{ival: &n}}
	}
	return nil
}

// Attributes returns the search attributes of an instance, by name; none
// (not an error) when it has none or there is no such instance.
func (s *Store) Attributes(ctx context.Context, id string) ([]abi.Attribute, error) {
	var out []abi.Attribute
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, s.d.Rebind(`SELECT name, type, str, num, ival FROM instance_attributes WHERE instance_id = ? ORDER BY name, str`), id)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = nil
		for rows.Next() {
			var name, typ string
			var row attributeRow
			if err := rows.Scan(&name, &typ, &row.str, &row.num, &row.ival); err != nil {
				return err
			}
			a, err := attributeOf(name, abi.AttributeType(typ), row)
			if err != nil {
				return err
			}
			if n := len(out); n > 0 && out[n-1].Name == name && a.Type == abi.AttributeKeywords {
				out[n-1].Keywords = append(out[n-1].Keywords, a.Keywords...)
				continue
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("search attributes of %q: %w", id, err)
	}
	return out, nil
}

// attributeOf reads an attribute (one element of a keyword list) from its
// row, refusing a row whose columns do not hold its type.
func attributeOf(name string, typ abi.AttributeType, row attributeRow) (abi.Attribute, error) {
	a := abi.Attribute{Name: name, Type: typ}
	ok := false
	switch typ {
	case abi.AttributeString:
		if ok = row.str != nil; ok {
			a.String = *row.str
		}
	case abi.AttributeKeywords:
		if ok = row.str != nil; ok {
			a.Keywords = []string{*row.str}
		}
	case abi.AttributeInt:
		if ok = row.ival != nil; ok {
			a.Int = *row.ival
		}
	case abi.AttributeFloat:
		if ok = row.num != nil; ok {
			a.Float = *row.num
		}
	case abi.AttributeBool:
		if ok = row.ival != nil; ok {
			a.Bool = *row.ival != 0
		}
	case abi.AttributeTime:
		if ok = row.ival != nil; ok {
			a.Time = time.Unix(0, *row.ival).UTC()
		}
	}
	if !ok {
		return a, fmt.Errorf("search attribute %s: a stored row of type %s holds no value of it (a damaged or edited row)", abi.Quote(name), abi.Quote(string(typ)))
	}
	return a, nil
}
