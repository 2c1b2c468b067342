package structtensor

import "testing"

// TestWithRows sets dimension 0 of a struct spec, its fields' and its
// nested structs', and leaves the spec it was given as it was.
func TestWithRows(t *testing.T) {
	spec := &StructSpec{Shape: Shape{3}, Fields: []FieldSpec{
		{Name: "id", Spec: &TensorSpec{DType: Int64, Shape: Shape{3}}},
		{Name: "tags", Spec: &RaggedSpec{DType: String, Shape: Shape{3, Unknown}, RaggedRank: 1}},
		{Name: "sub", Spec: &StructSpec{Shape: Shape{3, 2}, Fields: []FieldSpec{
			{Name: "x", Spec: &TensorSpec{DType: Float32, Shape: Shape{3, 2}}},
		}}},
		{Name: "scalar", Spec: &TensorSpec{DType: Bool, Shape: Shape{}}},
	}}
	before := spec.String()
	for _, n := range []int{0, 7, Unknown} {
		want := &StructSpec{Shape: Shape{n}, Fields: []FieldSpec{
			{Name: "id", Spec: &TensorSpec{DType: Int64, Shape: Shape{n}}},
			{Name: "tags", Spec: &RaggedSpec{DType: String, Shape: Shape{n, Unknown}, RaggedRank: 1}},
			{Name: "sub", Spec: &StructSpec{Shape: Shape{n, 2}, Fields: []FieldSpec{
				{Name: "x", Spec: &TensorSpec{DType: Float32, Shape: Shape{n, 2}}},
			}}},
			{Name: "scalar", Spec: &TensorSpec{DType: Bool, Shape: Shape{}}},
		}}
		if got := WithRows(spec, n); !got.Equal(want) {
			t.Errorf("WithRows(%v, %d) = %v, want %v", spec, n, got, want)
		}
	}
	if got := AnyRows(spec); !got.Equal(WithRows(spec, Unknown)) {
		t.Errorf("AnyRows = %v, want WithRows(spec, Unknown)", got)
	}
	if spec.String() != before {
		t.Errorf("WithRows changed its argument: %v, was %s", spec, before)
	}
}
