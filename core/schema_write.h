/*
 * schema_write.h - the writer's serialisers, generated from schema.def: for
 * each record a struct of its fields, ct_out_<record>, and
 * ct_write_<record>, which writes them into an open JSON line (jsonl.h).
 * The code that knows the values fills the struct; nothing else spells a
 * record, so adding a field to the table adds it to the struct, and the
 * writer writes it.
 *
 * Owns: each shape's C type on the writer's side (CT_OUT_C_<shape>) and how
 * each shape is written.
 *
 * Invariants: every field of the record is written, in the table's order,
 * except those whose bit (CT_FIELD_BIT) is set in the struct's `absent`
 * (left out: the table's "present only when ..." and "launches only"
 * fields) or `nulls` (written as null); `absent` wins.  An event's members
 * follow the envelope ct_jsonl_begin writes; a nested object's are written
 * into the object opened for them.  Values go through jsonl.h, so a bounded
 * line stays valid whatever they hold.
 */
#ifndef CT_SCHEMA_WRITE_H
#define CT_SCHEMA_WRITE_H

#include "jsonl.h"
#include "schema.h"

/* The room an ct_string_at may build a string in. */
#define CT_OUT_SCRATCH 512

/* The i-th of n strings: items' own, or built in scratch; NULL leaves it
 * out of the array. */
typedef const char *(*ct_string_at)(const void *items, size_t i, char *scratch, size_t cap);
typedef struct ct_out_strings {
    const void *items;
    size_t n;
    ct_string_at at;
} ct_out_strings;

typedef struct ct_out_ints {
    const int64_t *v;
    size_t n;
} ct_out_ints;

/* Writes the members of the i-th object (the only one, 0, of an OBJECT),
 * usually by filling its record's struct and calling ct_write_<record>. */
typedef void (*ct_object_write)(ct_jsonl *j, const void *items, size_t i);
typedef struct ct_out_objects {
    const void *items;
    size_t n; /* an OBJECT: ignored, it is one */
    ct_object_write write;
} ct_out_objects;

#define CT_OUT_C_STR const char * /* NULL: null */
#define CT_OUT_C_HEX uint64_t
#define CT_OUT_C_INT int64_t
#define CT_OUT_C_NUM int64_t /* nanoseconds, written as seconds with microseconds */
#define CT_OUT_C_BOOL bool
#define CT_OUT_C_DIMS ct_dims
#define CT_OUT_C_STRS ct_out_strings
#define CT_OUT_C_INTS ct_out_ints
#define CT_OUT_C_OBJ ct_out_objects
#define CT_OUT_C_OBJS ct_out_objects

/* struct ct_out_<record> { uint64_t absent, nulls; <a member per field> }:
 * each CT_RECORD row closes the struct before it and opens its own, so
 * the first row closes a placeholder. */
struct ct_out_placeholder_ {
    char unused_;
#define CT_RECORD(record, title) \
    }                            \
    ;                            \
    struct ct_out_##record {     \
        uint64_t absent, nulls;
#define CT_FIELD(record, key, type, meaning) CT_PASTE(CT_OUT_C_, CT_SHAPE_OF_##type) key;
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

/* Writes a record's fields from its struct: what ct_write_<record> calls. */
void ct_schema_write(ct_jsonl *j, unsigned record, const void *values);

#define CT_RECORD(record, title)                                                       \
    typedef struct ct_out_##record ct_out_##record;                                    \
    static inline void ct_write_##record(ct_jsonl *j, const struct ct_out_##record *v) \
    {                                                                                  \
        ct_schema_write(j, CT_RECORD_##record, v);                                     \
    }
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD

/* Plain strings, for a ct_out_strings. */
ct_out_strings ct_out_strings_of(const char *const *v, size_t n);

#endif
