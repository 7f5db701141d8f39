/*
 * schema_write.c - writes a record's fields from its ct_out_<record>
 * struct, walking the record's rows of the table (schema.h).
 *
 * Owns: where each field lies in its struct (out_offset, generated from
 * schema.def) and how each shape is written.
 *
 * Invariants: out_offset has one entry per field, in ct_schema_fields'
 * order (checked at compile time); the masks lead every struct; a field
 * is written at most once, by the jsonl.h call of its shape.
 */
#include "schema_write.h"

#include <assert.h>

static const size_t out_offset[] = {
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) offsetof(struct ct_out_##record, key),
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

_Static_assert(sizeof out_offset / sizeof out_offset[0] == CT_FIELDS, "an offset per field");

typedef struct out_masks {
    uint64_t absent, nulls;
} out_masks;

#define CT_RECORD(record, title)                                                              \
    _Static_assert(offsetof(struct ct_out_##record, absent) == offsetof(out_masks, absent) && \
                       offsetof(struct ct_out_##record, nulls) == offsetof(out_masks, nulls), \
                   "the masks lead the struct");
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD

static void write_strings(ct_jsonl *j, const char *key, const ct_out_strings *s)
{
    ct_jsonl_open_array(j, key);
    for (size_t i = 0; i < s->n; i++) {
        char scratch[CT_OUT_SCRATCH];
        const char *text = s->at(s->items, i, scratch, sizeof scratch);
        if (text)
            ct_jsonl_str(j, NULL, text);
    }
    ct_jsonl_close(j);
}

static void write_objects(ct_jsonl *j, const char *key, const ct_out_objects *o, bool one)
{
    if (one) {
        ct_jsonl_open_object(j, key);
        o->write(j, o->items, 0);
        ct_jsonl_close(j);
        return;
    }
    ct_jsonl_open_array(j, key);
    for (size_t i = 0; i < o->n; i++) {
        ct_jsonl_open_object(j, NULL);
        o->write(j, o->items, i);
        ct_jsonl_close(j);
    }
    ct_jsonl_close(j);
}

static void write_field(ct_jsonl *j, const ct_schema_field *f, const void *value)
{
    switch (f->shape) {
    case CT_SHAPE_STR: ct_jsonl_str(j, f->key, *(const char *const *)value); return;
    case CT_SHAPE_HEX: ct_jsonl_hex(j, f->key, *(const uint64_t *)value); return;
    case CT_SHAPE_INT: ct_jsonl_int(j, f->key, *(const int64_t *)value); return;
    case CT_SHAPE_NUM: ct_jsonl_time(j, f->key, *(const int64_t *)value); return;
    case CT_SHAPE_BOOL: ct_jsonl_bool(j, f->key, *(const bool *)value); return;
    case CT_SHAPE_DIMS:
        ct_jsonl_open_array(j, f->key);
        for (int i = 0; i < 3; i++)
            ct_jsonl_int(j, NULL, ((const ct_dims *)value)->d[i]);
        ct_jsonl_close(j);
        return;
    case CT_SHAPE_STRS: write_strings(j, f->key, value); return;
    case CT_SHAPE_INTS: {
        const ct_out_ints *ints = value;
        ct_jsonl_open_array(j, f->key);
        for (size_t i = 0; i < ints->n; i++)
            ct_jsonl_int(j, NULL, ints->v[i]);
        ct_jsonl_close(j);
        return;
    }
    case CT_SHAPE_OBJ:
    case CT_SHAPE_OBJS: write_objects(j, f->key, value, f->shape == CT_SHAPE_OBJ); return;
    }
    assert(!"every shape is written");
}

void ct_schema_write(ct_jsonl *j, unsigned record, const void *values)
{
    assert(record < CT_RECORDS);
    const out_masks *masks = values;
    for (unsigned i = ct_schema_records[record].first; i < ct_schema_n_fields && ct_schema_fields[i].record == record;
         i++) {
        uint64_t bit = UINT64_C(1) << (i - ct_schema_records[record].first);
        if (masks->absent & bit)
            continue;
        if (masks->nulls & bit)
            ct_jsonl_null(j, ct_schema_fields[i].key);
        else
            write_field(j, &ct_schema_fields[i], (const char *)values + out_offset[i]);
    }
}

static const char *plain_string(const void *items, size_t i, char *scratch, size_t cap)
{
    (void)scratch;
    (void)cap;
    return ((const char *const *)items)[i];
}

ct_out_strings ct_out_strings_of(const char *const *v, size_t n)
{
    return (ct_out_strings){v, n, plain_string};
}
