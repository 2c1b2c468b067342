"""Static shapes for the example decode op's outputs.

StructTensorDecodeExample's outputs are fixed by its `layout` attribute
(decode.ExamplePlan.MarshalLayout), but TensorFlow's C shape-inference API,
through which the op is registered, reads no string attribute: the op's
shape function states only that the records are a vector. decode_example
reads the layout here and gives every output its shape with
tf.ensure_shape, as Go's cops.DecodeExampleGraph does with EnsureShape.
"""
import tensorflow as tf

# Field layouts of the layout's byte form.
_DENSE, _RAGGED, _LISTS, _STRIDE, _STEPS = range(5)
_UNIFORM = 3  # decode.UniformRowLength


class _Reader:
    def __init__(self, b):
        self.b, self.p = b, 0

    def uvarint(self):
        x, shift = 0, 0
        while True:
            if self.p >= len(self.b) or shift > 63:
                raise ValueError(f"layout: malformed at byte {self.p}")
            c = self.b[self.p]
            self.p += 1
            x |= (c & 0x7F) << shift
            if c < 0x80:
                return x
            shift += 7

    def small(self, limit):
        x = self.uvarint()
        if x > limit:
            raise ValueError(f"layout: {x} at byte {self.p} is over {limit}")
        return x

    def bytes(self):
        n = self.small(len(self.b) - self.p)
        s = self.b[self.p:self.p + n]
        self.p += n
        return s


def example_component_shapes(layout, nrows=None):
    """The shapes (lists, None for unknown) of the example op's outputs for
    layout, in output order, with nrows records (None: unknown): a
    FixedLen feature's values [nrows, shape...]; a feature's outermost row
    splits [nrows + 1], any other row splits [None]; the values of a
    FixedLenSequence feature [None, shape...], of the others [None]."""
    r = _Reader(bytes(layout))
    if r.b[:4] != b"STEL":
        raise ValueError("layout: not a feature layout (no STEL header)")
    r.p = 4
    if r.uvarint() != 1:
        raise ValueError("layout: unknown version")
    splits0 = None if nrows is None else nrows + 1
    shapes = []
    for _ in range(r.small(1 << 20)):
        r.bytes()  # the field's name
        kind = r.uvarint()
        r.uvarint()  # slot
        r.uvarint()  # values per record or step
        dims = [r.small(1 << 31) for _ in range(r.small(64))]
        parts = r.small(64)
        for _ in range(parts):
            if r.uvarint() == _UNIFORM:
                r.uvarint()  # row length
            else:
                r.uvarint()  # slot of the partition's feature
        if kind == _DENSE:
            shapes.append([nrows] + dims)
        elif kind == _RAGGED:
            shapes += [[splits0]] + [[None]] * parts + [[None]]
        elif kind == _LISTS:
            shapes += [[splits0], [None], [None]]
        elif kind in (_STRIDE, _STEPS):
            shapes += [[splits0], [None] + dims]
        else:
            raise ValueError(f"layout: unknown field layout {kind}")
    if r.p != len(r.b):
        raise ValueError(f"layout: {len(r.b) - r.p} bytes past its last field")
    return shapes


def decode_example(records, plan, layout, component_dtypes, num_threads=0, name=None):
    """Runs StructTensorDecodeExample on records (a string vector) with the
    plan and layout Go compiled (decode.ExamplePlan.MarshalBinary and
    MarshalLayout; a DataView's metadata holds both) and returns its
    outputs with their static shapes (example_component_shapes)."""
    import structtensor_tf
    records = tf.convert_to_tensor(records, dtype=tf.string)
    records.shape.assert_has_rank(1)
    shapes = example_component_shapes(layout, records.shape[0])
    if len(shapes) != len(component_dtypes):
        raise ValueError(f"layout has {len(shapes)} outputs, component_dtypes {len(component_dtypes)}")
    outs = structtensor_tf.ops.struct_tensor_decode_example(
        records, plan=plan, layout=layout, component_dtypes=component_dtypes, num_threads=num_threads, name=name)
    return [tf.ensure_shape(t, s) for t, s in zip(outs, shapes)]
