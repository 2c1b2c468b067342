package ops_test

// Naive references: the ops rewritten over nested Go values (the ToValue
// form: map[string]any for a record, []any for a dimension, typed
// scalars), one element at a time, with no sharing and no partitions.

// atDepth applies f to every sub-value d dimensions deep in x.
func atDepth(x any, d int, f func(any) any) any {
	if d == 0 {
		return f(x)
	}
	l := x.([]any)
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = atDepth(e, d-1, f)
	}
	return out
}

// atDepth2 applies f to matching sub-values d deep in x and y.
func atDepth2(x, y any, d int, f func(a, b any) any) any {
	if d == 0 {
		return f(x, y)
	}
	lx, ly := x.([]any), y.([]any)
	out := make([]any, len(lx))
	for i := range lx {
		out[i] = atDepth2(lx[i], ly[i], d-1, f)
	}
	return out
}

func refGather(list any, idx []int64) any {
	l := list.([]any)
	out := make([]any, len(idx))
	for k, i := range idx {
		if i < 0 {
			i += int64(len(l))
		}
		out[k] = l[i]
	}
	return out
}

func refMask(list any, keep []bool) any {
	out := []any{}
	for i, e := range list.([]any) {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out
}

func refTile(list any, m int) any {
	out := []any{}
	for range m {
		out = append(out, list.([]any)...)
	}
	return out
}

// refFlatten concatenates the lists of a list of lists.
func refFlatten(x any) any {
	out := []any{}
	for _, e := range x.([]any) {
		out = append(out, e.([]any)...)
	}
	return out
}

// refMerge merges dimensions outer..inner of x.
func refMerge(x any, outer, inner int) any {
	return atDepth(x, outer, func(e any) any {
		for range inner - outer {
			e = refFlatten(e)
		}
		return e
	})
}

// elements returns the records d deep in x, in order.
func elements(x any, d int) []any {
	if d == 0 {
		return []any{x}
	}
	var out []any
	for _, e := range x.([]any) {
		out = append(out, elements(e, d-1)...)
	}
	return out
}

// refPromote is struct2tensor's promote on one grandparent element g:
// the leaf values under every parent element, their dimensions merged.
func refPromote(parentVal any, kp, kc int, leafName string) any {
	recs := elements(parentVal, kp)
	if kp == 0 {
		return recs[0].(map[string]any)[leafName]
	}
	out := []any{}
	for _, r := range recs {
		v := r.(map[string]any)[leafName]
		if kc == 0 {
			out = append(out, v)
		} else {
			out = append(out, v.([]any)...)
		}
	}
	return out
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
