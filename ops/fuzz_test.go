package ops_test

import (
	"errors"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
)

// FuzzPaths feeds arbitrary path strings and field names to the path ops
// (whose path syntax "a.b.c" is the one thing this package parses): each
// must succeed or return an error wrapping a sentinel, never panic.
func FuzzPaths(f *testing.F) {
	for _, s := range []string{"docs.tokens", "docs", "id", "docs.tokens.x", "", ".", "docs..tokens", "a.b.c.d", "docs.tokens.", "Ünïcode", "docs.id"} {
		f.Add(s, "docs", "new_field")
	}
	root := structValue(f, `[{"docs":[{"tokens":[7,17],"id":1},{"tokens":[3],"id":2}],"id":5,"keep":[true,false]},{"docs":[],"id":6,"keep":[]}]`)
	f.Fuzz(func(t *testing.T, path, other, name string) {
		check := func(op string, err error) {
			if err == nil {
				return
			}
			for _, s := range []error{ops.ErrPath, ops.ErrFieldExists, ops.ErrShape, ops.ErrArgument} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("%s(%q, %q, %q): error %v wraps no ops sentinel", op, path, other, name, err)
		}
		_, err := ops.Promote(root, path, name)
		check("Promote", err)
		_, err = ops.Broadcast(root, path, other, name)
		check("Broadcast", err)
		_, err = ops.PromoteAndBroadcast(root, map[string]string{name: path}, other)
		check("PromoteAndBroadcast", err)
		_, err = ops.Reroot(root, path, name)
		check("Reroot", err)
		_, err = ops.Project(root, path, other)
		check("Project", err)
		_, err = ops.Slice(root, path, name, 0, 1)
		check("Slice", err)
		_, err = ops.SizeField(root, path, name)
		check("SizeField", err)
		_, err = ops.PositionalIndex(root, path, name)
		check("PositionalIndex", err)
		_, err = ops.FilterByChild(root, path, other, name)
		check("FilterByChild", err)
		_, err = ops.FilterBySibling(root, path, other, name)
		check("FilterBySibling", err)
		_, err = ops.MapRagged(root, path, []string{other}, name, nil)
		check("MapRagged", err)
	})
}
