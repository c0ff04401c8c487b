"""TF1's lookup tables: `tf.lookup` (TF 1.15: `StaticHashTable`, `StaticVocabularyTable`,
`KeyValueTensorInitializer`, `TextFileInitializer`, `TextFileIndex`) and `tf.contrib.lookup`
(`HashTable`, `IdTableWithHashBuckets`, `MutableHashTable`, `MutableDenseHashTable`,
`index_table_from_tensor`/`_file`, `index_to_string_table_from_tensor`/`_file`, ...).

A table is a handle op and the ops that read and write it (kernels/lookup_ops.py); its contents
are session state. A static table's initializer joins the TABLE_INITIALIZERS collection, run by
`tf.tables_initializer()` (and by a Scaffold's and SavedModel `main_op`'s init ops); a text file
initializer's file name joins ASSET_FILEPATHS, so a SavedModel copies the vocabulary as an asset.
"""

from __future__ import annotations

from .graph import dtypes
from .graph.graph import get_default_graph, name_scope
from .graph.keys import GraphKeys
from .graph.ops import Tensor
from .kernels.common import apply_op, constant, convert_to_tensor
from .kernels.creation_ops import range as tf_range
from .kernels.lookup_ops import (
    LINE_NUMBER,
    WHOLE_LINE,
    string_to_hash_bucket_fast,
    table_handle,
)
from .kernels.math_ops import add, cast, equal, where
from .kernels.string_ops import as_string
from .tf1_names import missing_attribute

__all__ = ["StaticHashTable", "StaticVocabularyTable", "KeyValueTensorInitializer", "TextFileInitializer",
           "TextFileIndex"]  # TF 1.15's tf.lookup; tf.contrib.lookup has the rest (dflow/contrib/lookup.py)


class TextFileIndex:
    WHOLE_LINE = WHOLE_LINE
    LINE_NUMBER = LINE_NUMBER


class HasherSpec(tuple):
    """(hasher, key): TF1's hasher choice; dflow has the fast hash (FarmHash Fingerprint64)."""

    def __new__(cls, hasher="fasthash", key=None):
        return super().__new__(cls, (hasher, key))

    hasher = property(lambda self: self[0])
    key = property(lambda self: self[1])


FastHashSpec = HasherSpec("fasthash", None)


def _check_dtype(t, dtype, what):
    if t.dtype != dtype:
        raise TypeError(f"Signature mismatch. {what} must be dtype {dtype!r}, got {t.dtype!r}.")


class LookupInterface:
    """A table: `key_dtype`, `value_dtype`, `name`, `lookup(keys)`, `size()`."""

    def __init__(self, key_dtype, value_dtype, name):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._name = name

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    name = property(lambda self: self._name)


class _TableBase(LookupInterface):
    """A table backed by one handle op (`resource_handle`, also `table_ref`)."""

    _value_shape = ()

    @property
    def resource_handle(self):
        return self._handle

    table_ref = resource_handle

    def _attrs(self):
        return {"key_dtype": self._key_dtype, "value_dtype": self._value_dtype,
                "value_shape": list(self._value_shape)}

    def size(self, name=None):
        """int64 scalar: the number of entries (FailedPreconditionError at run time if a static
        table was not initialized)."""
        with name_scope(name, f"{self._name}_Size", [self._handle]):
            return apply_op("LookupTableSizeV2", [self._handle], self._attrs())

    def _lookup(self, keys, default, name):
        keys = convert_to_tensor(keys, dtype=self._key_dtype if not isinstance(keys, Tensor) else None, name="keys")
        _check_dtype(keys, self._key_dtype, "Keys")
        with name_scope(name, f"{self._name}_Lookup", [self._handle, keys]):
            return apply_op("LookupTableFindV2", [self._handle, keys, default], self._attrs())


class _InitializableTable(_TableBase):
    def __init__(self, default_value, initializer, op_name):
        super().__init__(initializer.key_dtype, initializer.value_dtype, None)
        self._handle = table_handle("HashTableV2", self._key_dtype, self._value_dtype, name=op_name)
        self._name = self._handle.op.name.split("/")[-1]
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype, name="default_value")
        self._initializer = initializer
        self._init_op = initializer.initialize(self)
        get_default_graph().add_to_collection(GraphKeys.TABLE_INITIALIZERS, self._init_op)

    default_value = property(lambda self: self._default_value)
    initializer = property(lambda self: self._init_op)
    init = initializer

    def lookup(self, keys, name=None):
        """Values of `keys` (same shape), the default value for keys not in the table."""
        return self._lookup(keys, self._default_value, name)


class StaticHashTable(_InitializableTable):
    """An immutable table filled by its initializer (TF1's `tf.lookup.StaticHashTable`)."""

    def __init__(self, initializer, default_value, name=None):
        super().__init__(default_value, initializer, name or "hash_table")


class HashTable(StaticHashTable):
    """`tf.contrib.lookup.HashTable(initializer, default_value, shared_name=None, name=None)`."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        super().__init__(initializer, default_value, name=name)


class KeyValueTensorInitializer:
    """Fills a table from parallel `keys` and `values` tensors (InitializeTableV2)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with name_scope(name, "key_value_init"):
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name or "key_value_init"
        self.key_dtype = self._keys.dtype
        self.value_dtype = self._values.dtype

    def initialize(self, table):
        _check_dtype(self._keys, table.key_dtype, "Keys")
        _check_dtype(self._values, table.value_dtype, "Values")
        with name_scope(self._name):
            return apply_op("InitializeTableV2", [table.resource_handle, self._keys, self._values],
                            {"Tkey": table.key_dtype, "Tval": table.value_dtype}, name="table_init")


class TextFileInitializer:
    """Fills a table from a text file: each line's `key_index` and `value_index` fields (a column
    split by `delimiter`, TextFileIndex.WHOLE_LINE or LINE_NUMBER), the first `vocab_size` lines.
    At run time: NotFoundError for a missing file, InvalidArgumentError for a short file or a bad
    field."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None, delimiter="\t",
                 name=None):
        key_dtype, value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, key_dtype), ("value", value_index, value_dtype)):
            if index < WHOLE_LINE:
                raise ValueError(f"Invalid {what} index {index}.")
            if index == LINE_NUMBER and dtype != dtypes.int64:
                raise ValueError(f"Signature mismatch. {what.capitalize()}s must be dtype {dtypes.int64!r}, got "
                                 f"{dtype!r}.")
            if index == WHOLE_LINE and not dtype.is_integer and dtype != dtypes.string:
                raise ValueError(f"Signature mismatch. {what.capitalize()}s must be integer or string, got {dtype!r}.")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self._key_index, self._value_index = int(key_index), int(value_index)
        self._vocab_size, self._delimiter = vocab_size, delimiter
        self._name = name or "text_file_init"
        with name_scope(self._name):
            self._filename = convert_to_tensor(filename, dtype=dtypes.string, name="asset_filepath")
        if self._filename.op.type == "Const":
            get_default_graph().add_to_collection(GraphKeys.ASSET_FILEPATHS, self._filename)

    def initialize(self, table):
        _check_dtype(table.resource_handle, dtypes.string, "Table handle")
        if table.key_dtype != self.key_dtype or table.value_dtype != self.value_dtype:
            raise TypeError(f"Signature mismatch. The table is {table.key_dtype!r} -> {table.value_dtype!r}, the "
                            f"initializer gives {self.key_dtype!r} -> {self.value_dtype!r}.")
        with name_scope(self._name):
            return apply_op("InitializeTableFromTextFileV2", [table.resource_handle, self._filename],
                            {"key_index": self._key_index, "value_index": self._value_index,
                             "vocab_size": -1 if self._vocab_size is None else int(self._vocab_size),
                             "delimiter": self._delimiter}, name="InitializeTableFromTextFileV2")


class TextFileStringTableInitializer(TextFileInitializer):
    """int64 line numbers -> string lines (the defaults), from a vocabulary file."""

    def __init__(self, filename, key_column_index=LINE_NUMBER, value_column_index=WHOLE_LINE, vocab_size=None,
                 delimiter="\t", name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string, value_column_index, vocab_size,
                         delimiter, name)


class TextFileIdTableInitializer(TextFileInitializer):
    """string lines -> int64 line numbers (the defaults), from a vocabulary file."""

    def __init__(self, filename, key_column_index=WHOLE_LINE, value_column_index=LINE_NUMBER, vocab_size=None,
                 delimiter="\t", name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64, value_column_index, vocab_size,
                         delimiter, name)


def _hash_buckets(keys, num_oov_buckets):
    if keys.dtype != dtypes.string:
        keys = as_string(keys)
    return string_to_hash_bucket_fast(keys, num_oov_buckets, name="hash_bucket")


class IdTableWithHashBuckets(LookupInterface):
    """`table`'s ids, and for keys it lacks (its default value) one of `num_oov_buckets` buckets
    after its ids: Fingerprint64(key) % num_oov_buckets + table.size() (TF1's FastHashSpec)."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None, key_dtype=None):
        if table is None and key_dtype is None:
            raise ValueError("Either table or key_dtype must be provided.")
        if num_oov_buckets < 0:
            raise ValueError(f"oov_buckets must be >= 0, got {num_oov_buckets}.")
        if hasher_spec[0] != "fasthash":
            raise ValueError(f"dflow hashes out-of-vocabulary keys with the fast hash only, got {hasher_spec!r}")
        key_dtype = dtypes.as_dtype(key_dtype) if key_dtype is not None else table.key_dtype
        super().__init__(key_dtype, dtypes.int64, name or "hash_bucket")
        self._table, self._num_oov_buckets = table, int(num_oov_buckets)

    initializer = property(lambda self: self._table.initializer if self._table is not None else None)
    init = initializer

    def size(self, name=None):
        with name_scope(name, f"{self._name}_Size"):
            if self._table is None:
                return constant(self._num_oov_buckets, dtypes.int64)
            return add(self._table.size(), self._num_oov_buckets)

    def lookup(self, keys, name=None):
        keys = convert_to_tensor(keys, name="keys")
        if keys.dtype != self._key_dtype and not (keys.dtype.is_integer and self._key_dtype.is_integer):
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype!r}, got {keys.dtype!r}.")
        with name_scope(name, f"{self._name}_Lookup"):
            if self._table is None:
                return _hash_buckets(keys, self._num_oov_buckets)
            table_keys = cast(keys, dtypes.int64) if keys.dtype.is_integer and keys.dtype != self._table.key_dtype \
                else keys
            ids = self._table.lookup(table_keys)
            if not self._num_oov_buckets:
                return ids
            buckets = add(_hash_buckets(keys, self._num_oov_buckets), self._table.size())
            return where(equal(ids, self._table.default_value), buckets, ids)


class StaticVocabularyTable(IdTableWithHashBuckets):
    """`tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets)`: the initializer's ids, and
    `num_oov_buckets` (>= 1) hash buckets after them for other keys."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0.")
        if initializer.value_dtype != dtypes.int64:
            raise TypeError(f"Invalid value dtype, expected {dtypes.int64!r} but got {initializer.value_dtype!r}.")
        table = StaticHashTable(initializer, -1, name=name or "vocab_table")
        super().__init__(table, num_oov_buckets, name=name or "vocab_table", key_dtype=lookup_key_dtype)


class MutableHashTable(_TableBase):
    """A table changed by `insert(keys, values)` and `remove(keys)`, read by `lookup`, `size` and
    `export()` (keys, values); values may be vectors (the default value's shape). Starts empty; not
    saved by a Saver in dflow."""

    _op_type = "MutableHashTableV2"

    def __init__(self, key_dtype, value_dtype, default_value, shared_name=None, name="MutableHashTable",
                 checkpoint=True):
        super().__init__(key_dtype, value_dtype, name)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype, name="default_value")
        self._value_shape = tuple(self._default_value.shape.as_list())
        self._handle = table_handle(self._op_type, self._key_dtype, self._value_dtype, shared_name=shared_name,
                                    value_shape=self._value_shape, name=name, extra=self._extra_attrs())
        self._name = self._handle.op.name.split("/")[-1]

    def _extra_attrs(self):
        return {}

    default_value = property(lambda self: self._default_value)

    def _kv(self, keys, values):
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        _check_dtype(keys, self._key_dtype, "Keys")
        out = [keys]
        if values is not None:
            values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
            _check_dtype(values, self._value_dtype, "Values")
            out.append(values)
        return out

    def lookup(self, keys, name=None):
        return self._lookup(keys, self._default_value, name)

    def insert(self, keys, values, name=None):
        """An op putting `values[i]` at `keys[i]` (values: keys' shape + the value shape)."""
        with name_scope(name, f"{self._name}_lookup_table_insert"):
            return apply_op("LookupTableInsertV2", [self._handle] + self._kv(keys, values), self._attrs())

    def remove(self, keys, name=None):
        """An op removing `keys` (absent keys are ignored)."""
        with name_scope(name, f"{self._name}_lookup_table_remove"):
            return apply_op("LookupTableRemoveV2", [self._handle] + self._kv(keys, None), self._attrs())

    def export(self, name=None):
        """(keys [n], values [n, ...value shape]) of the table, in no set order."""
        with name_scope(name, f"{self._name}_lookup_table_export_values"):
            return apply_op("LookupTableExportV2", [self._handle], self._attrs())


class MutableDenseHashTable(MutableHashTable):
    """`MutableHashTable` with TF1's open-addressing signature: `empty_key` (and `deleted_key`)
    may not be used as keys (InvalidArgumentError at run time)."""

    _op_type = "MutableDenseHashTableV2"

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key=None, initial_num_buckets=None,
                 shared_name=None, name="MutableDenseHashTable", checkpoint=True):
        self._empty_key = empty_key.decode() if isinstance(empty_key, bytes) else empty_key
        self._deleted_key = deleted_key.decode() if isinstance(deleted_key, bytes) else deleted_key
        if deleted_key is not None and deleted_key == empty_key:
            raise ValueError("Empty and deleted keys must be different")
        super().__init__(key_dtype, value_dtype, default_value, shared_name=shared_name, name=name)

    def _extra_attrs(self):
        enc = (lambda k: k) if self._key_dtype != dtypes.string else (lambda k: k if k is None else str(k))
        return {"empty_key": enc(self._empty_key), "deleted_key": enc(self._deleted_key)}


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=FastHashSpec,
                            dtype=dtypes.string, name=None):
    """string (or integer) keys -> int64 ids: a key's position in `vocabulary_list`, else a hash
    bucket after the vocabulary (num_oov_buckets > 0) or `default_value`."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    if num_oov_buckets > 0 and default_value != -1:
        raise ValueError("Can't specify both num_oov_buckets and default_value.")
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets}.")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype == dtypes.string):
        raise TypeError(f"Only integer and string keys are supported, got {dtype!r}.")
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list, dtype=dtype if dtype == dtypes.string else None, name="keys")
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Expected {dtype!r}, got {keys.dtype!r}.")
        table_keys = cast(keys, dtypes.int64) if dtype.is_integer and keys.dtype != dtypes.int64 else keys
        n = keys.shape.as_list()[0] if keys.shape.ndims == 1 else None
        values = tf_range(n, dtype=dtypes.int64, name="values") if n is not None else None
        if values is None:
            raise ValueError("vocabulary_list must be a rank-1 list or tensor of known size.")
        init = KeyValueTensorInitializer(table_keys, values, name="table_init")
        table = HashTable(init, default_value, name="hash_table")
        if num_oov_buckets:
            return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec, key_dtype=dtype)
        return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=FastHashSpec, key_dtype=dtypes.string, name=None,
                          key_column_index=WHOLE_LINE, value_column_index=LINE_NUMBER, delimiter="\t"):
    """string keys -> int64 ids from a vocabulary file (the line number of a key, by default)."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets}.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    key_dtype = dtypes.as_dtype(key_dtype)
    if not (key_dtype.is_integer or key_dtype == dtypes.string):
        raise TypeError(f"Only integer and string keys are supported, got {key_dtype!r}.")
    with name_scope(name, "string_to_index"):
        init = TextFileIdTableInitializer(vocabulary_file, key_column_index, value_column_index, vocab_size,
                                          delimiter, key_dtype=dtypes.int64 if key_dtype.is_integer else key_dtype)
        table = HashTable(init, default_value, name="hash_table")
        if num_oov_buckets:
            return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec, key_dtype=key_dtype)
        return table


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """int64 ids -> the strings of `vocabulary_list` at them, `default_value` out of range."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with name_scope(name, "index_to_string"):
        values = convert_to_tensor(vocabulary_list, dtype=dtypes.string, name="values")
        n = values.shape.as_list()[0]
        init = KeyValueTensorInitializer(tf_range(n, dtype=dtypes.int64, name="keys"), values, name="table_init")
        return HashTable(init, default_value, name="hash_table")


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=LINE_NUMBER, value_column_index=WHOLE_LINE, delimiter="\t"):
    """int64 ids -> the lines of a vocabulary file, `default_value` out of range."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    with name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(vocabulary_file, key_column_index, value_column_index, vocab_size,
                                              delimiter)
        return HashTable(init, default_value, name="hash_table")


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """The strings of `mapping` at the int64 ids of `tensor` (a table built on the spot)."""
    table = index_to_string_table_from_tensor(mapping, default_value, name)
    return table.lookup(tensor)


__getattr__ = missing_attribute(__name__)
