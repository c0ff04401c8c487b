"""`tf.contrib.lookup`: TF1's lookup tables (dflow/lookup.py)."""

from __future__ import annotations

from ..kernels.lookup_ops import tables_initializer
from ..lookup import (
    FastHashSpec,
    HasherSpec,
    HashTable,
    IdTableWithHashBuckets,
    KeyValueTensorInitializer,
    LookupInterface,
    MutableDenseHashTable,
    MutableHashTable,
    TextFileIdTableInitializer,
    TextFileIndex,
    TextFileInitializer,
    TextFileStringTableInitializer,
    index_table_from_file,
    index_table_from_tensor,
    index_to_string,
    index_to_string_table_from_file,
    index_to_string_table_from_tensor,
)
from ..tf1_names import missing_attribute

__all__ = ["FastHashSpec", "HashTable", "HasherSpec", "IdTableWithHashBuckets", "KeyValueTensorInitializer",
           "LookupInterface", "MutableDenseHashTable", "MutableHashTable", "TextFileIdTableInitializer",
           "TextFileIndex", "TextFileInitializer", "TextFileStringTableInitializer", "index_table_from_file",
           "index_table_from_tensor", "index_to_string", "index_to_string_table_from_file",
           "index_to_string_table_from_tensor", "tables_initializer"]

__getattr__ = missing_attribute(__name__)
