package structtensor

import "testing"

// recipe builds the RFC's motivating example (a scalar struct holding a
// user embedding and a recipe with ingredients, steps and user ratings)
// from the constructors, with three ingredients, two steps and three
// ratings.
func recipe(t testing.TB) *StructTensor {
	t.Helper()
	must := func(v Value, err error) Value {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	scalar := func(x any) Value { return must(NewScalar(x)) }
	vec := func(x any) Value { return must(NewTensor(nil, x)) }
	ingredients := must(NewStruct(3,
		Field{"amount", vec([]float32{3, 1, 0.5})},
		Field{"unit", vec([]string{"cup", "cup", "cup"})},
		Field{"name", vec([]string{"flour", "white sugar", "brown sugar"})},
	))
	steps := must(NewStruct(2,
		Field{"description", vec([]string{"Preheat oven to 350 degrees F.", "Whisk together the flour."})},
	))
	ratings := must(NewStruct(3,
		Field{"user_embedding", must(NewTensor(Shape{3, 6}, []float32{
			0.7, 2.0, 0.3, 0.3, 5.2, 2.2,
			1.4, 0.0, 3.1, 1.1, 1.2, 0.3,
			0.5, 0.5, 0.5, 0.6, 0.6, 0.6,
		}))},
		Field{"score", vec([]float32{0.8, 0.4, 0.9})},
	))
	rec := must(NewScalarStruct(
		Field{"title", scalar("Snickerdoodle cookies")},
		Field{"est_time", scalar(float32(55))},
		Field{"ingredients", ingredients},
		Field{"step", steps},
		Field{"user_rating", ratings},
	))
	return must(NewScalarStruct(
		Field{"user_embedding", vec([]float32{0.8, 2.1, 0.3, 0.1, 9.2, 1.8})},
		Field{"recipe", rec},
	)).(*StructTensor)
}
