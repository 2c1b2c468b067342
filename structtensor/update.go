package structtensor

import (
	"fmt"
	"slices"
	"strings"
)

// Update is one field update for WithUpdatesOrdered: the path of the
// field (one name, or names through nested struct fields) and its new
// full-shape value; a nil Value removes the field.
type Update struct {
	Path  []string
	Value Value
}

// WithUpdates returns a StructTensor with fields added or replaced. Keys
// are field paths, a name or names of nested struct fields joined by "."
// ("recipe.rating"); values are full-shape (their outer dimensions must be
// the shape of the struct that holds the field, including the row splits
// of ragged dimensions); a nil value removes the field. Fields keep their
// place; new fields are appended in the order of their paths (sorted, as
// maps have no order: use WithUpdatesOrdered to choose it).
//
// The result shares st's partitions and every field it does not replace;
// a replaced field stores the given value's buffers. Errors wrap
// ErrShape, ErrFieldName or ErrNoField and name the path.
func (st *StructTensor) WithUpdates(updates map[string]Value) (*StructTensor, error) {
	paths := make([]string, 0, len(updates))
	for p := range updates {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	ups := make([]Update, len(paths))
	for i, p := range paths {
		ups[i] = Update{Path: strings.Split(p, "."), Value: updates[p]}
	}
	return st.WithUpdatesOrdered(ups...)
}

// WithUpdatesOrdered is WithUpdates with the updates in the given order,
// which is the order new fields are appended in. Two updates whose paths
// are equal or one a prefix of the other are an error.
func (st *StructTensor) WithUpdatesOrdered(updates ...Update) (*StructTensor, error) {
	for i, u := range updates {
		if len(u.Path) == 0 {
			return nil, fmt.Errorf("WithUpdates: %w: update %d has an empty path", ErrFieldName, i)
		}
		for _, o := range updates[:i] {
			n := min(len(o.Path), len(u.Path))
			if slices.Equal(o.Path[:n], u.Path[:n]) {
				return nil, fmt.Errorf("WithUpdates: %w: updates of %q and %q overlap",
					ErrFieldName, strings.Join(o.Path, "."), strings.Join(u.Path, "."))
			}
		}
	}
	cur := st
	for _, u := range updates {
		next, err := cur.withUpdate(u.Path, u.Value, nil)
		if err != nil {
			return nil, fmt.Errorf("WithUpdates: %w", err)
		}
		cur = next
	}
	checkInvariants(cur)
	return cur, nil
}

// withUpdate sets (or, with a nil value, removes) the field at path; done
// is the part of the path above st, for errors.
func (st *StructTensor) withUpdate(path []string, v Value, done []string) (*StructTensor, error) {
	name := path[0]
	here := strings.Join(append(done[:len(done):len(done)], name), ".")
	if !ValidFieldName(name) {
		return nil, fmt.Errorf("%w: %q in path %q", ErrFieldName, name, here)
	}
	i, exists := st.index[name]
	if len(path) == 1 {
		if isNil(v) {
			if !exists {
				return nil, fmt.Errorf("%w: cannot remove %q (fields: %s)", ErrNoField, here, strings.Join(st.FieldNames(), ", "))
			}
			return st.withFields(slices.Delete(slices.Clone(st.fields), i, i+1)), nil
		}
		flat, err := st.flattenField(v, here)
		if err != nil {
			return nil, err
		}
		return st.withField(name, flat), nil
	}
	if !exists {
		return nil, fmt.Errorf("%w: %q (fields: %s)", ErrNoField, here, strings.Join(st.FieldNames(), ", "))
	}
	full, err := JoinOuterDims(st.partitions, st.fields[i].Value)
	if err != nil {
		return nil, err
	}
	inner, ok := full.(*StructTensor)
	if !ok {
		return nil, fmt.Errorf("%w: %q is a %s, not a struct", ErrNoField, here, kindName(full))
	}
	updated, err := inner.withUpdate(path[1:], v, append(done[:len(done):len(done)], name))
	if err != nil {
		return nil, err
	}
	flat, err := st.flattenField(updated, here)
	if err != nil {
		return nil, err
	}
	return st.withField(name, flat), nil
}

// flattenField checks that the full-shape value v has st's shape as its
// outer dimensions and returns the flat value st stores for it.
func (st *StructTensor) flattenField(v Value, path string) (Value, error) {
	if st.rank == 0 {
		return v, nil
	}
	if v.Rank() < st.rank {
		return nil, fmt.Errorf("%w: field %q has rank %d, below the struct's rank %d", ErrShape, path, v.Rank(), st.rank)
	}
	parts, flat, err := SplitOuterDims(v, st.rank)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", path, err)
	}
	mismatch := v.NumRows() != st.nrows
	for j := range parts {
		mismatch = mismatch || !parts[j].Equal(st.partitions[j])
	}
	if mismatch {
		splits := ""
		if st.rank > 1 {
			splits = fmt.Sprintf(" (row splits %v vs the struct's %v)", parts, st.partitions)
		}
		return nil, fmt.Errorf("%w: field %q has outer shape %v, struct has shape %v%s",
			ErrShape, path, v.Shape()[:st.rank], st.Shape(), splits)
	}
	return flat, nil
}

// withField returns st with the flat value of field name replaced, or
// appended if st has no such field.
func (st *StructTensor) withField(name string, flat Value) *StructTensor {
	fields := slices.Clone(st.fields)
	if i, ok := st.index[name]; ok {
		fields[i] = Field{Name: name, Value: flat}
	} else {
		fields = append(fields, Field{Name: name, Value: flat})
	}
	return st.withFields(fields)
}

// withFields returns a struct with st's shape and partitions (shared) and
// the given flat fields, whose names and rows the caller has checked.
func (st *StructTensor) withFields(fields []Field) *StructTensor {
	index := make(map[string]int, len(fields))
	for i, f := range fields {
		index[f.Name] = i
	}
	return &StructTensor{rank: st.rank, nrows: st.nrows, partitions: st.partitions, fields: fields, index: index}
}

// Without returns st without the fields at paths (names, or nested paths
// joined by "."). The rest is shared, not copied. Removing a field that
// does not exist is an error wrapping ErrNoField.
func (st *StructTensor) Without(paths ...string) (*StructTensor, error) {
	return st.WithoutPaths(splitPaths(paths)...)
}

// WithoutPaths is Without with each path given as its names
// ([]string{"recipe", "step"}), as Update.Path and FieldValue take them.
// An empty path is an error wrapping ErrFieldName.
func (st *StructTensor) WithoutPaths(paths ...[]string) (*StructTensor, error) {
	if err := checkPaths(paths); err != nil {
		return nil, fmt.Errorf("Without: %w", err)
	}
	cur := st
	for _, p := range paths {
		next, err := cur.withUpdate(p, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("Without: %w", err)
		}
		cur = next
	}
	checkInvariants(cur)
	return cur, nil
}

// WithOnly returns st with only the fields at paths, in st's field order.
// A nested path ("recipe.title") keeps only that field of the nested
// struct; a path that names a whole field keeps all of it. The kept
// fields are shared, not copied. A path that does not exist is an error
// wrapping ErrNoField.
func (st *StructTensor) WithOnly(paths ...string) (*StructTensor, error) {
	return st.WithOnlyPaths(splitPaths(paths)...)
}

// WithOnlyPaths is WithOnly with each path given as its names
// ([]string{"recipe", "title"}), as Update.Path and FieldValue take them.
// An empty path is an error wrapping ErrFieldName.
func (st *StructTensor) WithOnlyPaths(paths ...[]string) (*StructTensor, error) {
	if err := checkPaths(paths); err != nil {
		return nil, fmt.Errorf("WithOnly: %w", err)
	}
	res, err := st.withOnly(paths, nil)
	if err != nil {
		return nil, fmt.Errorf("WithOnly: %w", err)
	}
	checkInvariants(res)
	return res, nil
}

// splitPaths splits dotted paths into their names.
func splitPaths(dotted []string) [][]string {
	split := make([][]string, len(dotted))
	for i, p := range dotted {
		split[i] = strings.Split(p, ".")
	}
	return split
}

// checkPaths rejects an empty path, which names no field.
func checkPaths(paths [][]string) error {
	for i, p := range paths {
		if len(p) == 0 {
			return fmt.Errorf("%w: path %d is empty", ErrFieldName, i)
		}
	}
	return nil
}

func (st *StructTensor) withOnly(paths [][]string, done []string) (*StructTensor, error) {
	// whole[name]: keep all of the field; sub[name]: keep parts of it.
	whole := map[string]bool{}
	sub := map[string][][]string{}
	for _, p := range paths {
		here := strings.Join(append(done[:len(done):len(done)], p[0]), ".")
		if _, ok := st.index[p[0]]; !ok {
			return nil, fmt.Errorf("%w: %q (fields: %s)", ErrNoField, here, strings.Join(st.FieldNames(), ", "))
		}
		if len(p) == 1 {
			whole[p[0]] = true
		} else {
			sub[p[0]] = append(sub[p[0]], p[1:])
		}
	}
	var fields []Field
	for _, f := range st.fields {
		switch {
		case whole[f.Name]:
			fields = append(fields, f)
		case sub[f.Name] != nil:
			here := append(done[:len(done):len(done)], f.Name)
			full, err := JoinOuterDims(st.partitions, f.Value)
			if err != nil {
				return nil, err
			}
			inner, ok := full.(*StructTensor)
			if !ok {
				return nil, fmt.Errorf("%w: %q is a %s, not a struct", ErrNoField, strings.Join(here, "."), kindName(full))
			}
			kept, err := inner.withOnly(sub[f.Name], here)
			if err != nil {
				return nil, err
			}
			flat, err := st.flattenField(kept, strings.Join(here, "."))
			if err != nil {
				return nil, err
			}
			fields = append(fields, Field{Name: f.Name, Value: flat})
		}
	}
	return st.withFields(fields), nil
}
