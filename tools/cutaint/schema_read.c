/*
 * schema_read.c - fills a record's ct_in_<record> struct from a parsed
 * object, walking the record's rows of the table (schema.h).
 *
 * Owns: where each field lies in its struct (in_offset, generated from
 * schema.def) and how each shape is read.
 *
 * Invariants: in_offset has one entry per field, in ct_schema_fields'
 * order (checked at compile time); `has` leads every struct, which is
 * zeroed first, and a field is written only with a whole value; a value of
 * the wrong JSON type reads as absent (report.h: a reader that rejected a
 * whole event over one odd field would hide the failure it describes).
 */
#include "schema_read.h"

#include <assert.h>
#include <string.h>

static const size_t in_offset[] = {
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) offsetof(struct ct_in_##record, key),
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

_Static_assert(sizeof in_offset / sizeof in_offset[0] == CT_FIELDS, "an offset per field");

static const size_t in_size[CT_RECORDS] = {
#define CT_RECORD(record, title) sizeof(struct ct_in_##record),
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

#define CT_RECORD(record, title) _Static_assert(offsetof(struct ct_in_##record, has) == 0, "the mask leads the struct");
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD

/* Three integers, or nothing written. */
static bool read_dims(const jsonr_doc *doc, const jv *v, ct_dims *out)
{
    if (v->type != JV_ARRAY || v->count != 3)
        return false;
    ct_dims d = {{0}};
    int k = 0;
    for (const jv *e = jsonr_first(doc, v); e; e = jsonr_next(doc, e)) {
        if (e->type != JV_NUMBER || !e->is_int)
            return false;
        assert(k < 3 && "an array's count is its elements");
        d.d[k++] = e->i;
    }
    *out = d;
    return true;
}

/* Reads v into value as f's shape; false when v is not of it. */
static bool read_field(const jsonr_doc *doc, const ct_schema_field *f, const jv *v, void *value)
{
    switch (f->shape) {
    case CT_SHAPE_STR:
    case CT_SHAPE_HEX:
        if (v->type != JV_STRING)
            return false;
        *(ct_text *)value = (ct_text){v->str, v->len};
        return true;
    case CT_SHAPE_INT:
        if (v->type != JV_NUMBER || !v->is_int)
            return false;
        *(int64_t *)value = v->i;
        return true;
    case CT_SHAPE_NUM:
        if (v->type != JV_NUMBER)
            return false;
        *(double *)value = v->num;
        return true;
    case CT_SHAPE_BOOL:
        if (v->type != JV_TRUE && v->type != JV_FALSE)
            return false;
        *(bool *)value = v->type == JV_TRUE;
        return true;
    case CT_SHAPE_DIMS: return read_dims(doc, v, value);
    case CT_SHAPE_STRS:
    case CT_SHAPE_INTS:
    case CT_SHAPE_OBJS:
    case CT_SHAPE_OBJ:
        if (v->type != (f->shape == CT_SHAPE_OBJ ? JV_OBJECT : JV_ARRAY))
            return false;
        *(const jv **)value = v;
        return true;
    }
    assert(!"every shape is read");
    return false;
}

void ct_schema_read(const jsonr_doc *doc, const jv *obj, unsigned record, void *values)
{
    assert(record < CT_RECORDS && obj && obj->type == JV_OBJECT);
    memset(values, 0, in_size[record]);
    uint64_t *has = values;
    for (unsigned i = ct_schema_records[record].first; i < ct_schema_n_fields && ct_schema_fields[i].record == record;
         i++) {
        const ct_schema_field *f = &ct_schema_fields[i];
        const jv *v = jsonr_get(doc, obj, f->key);
        if (v && read_field(doc, f, v, (char *)values + in_offset[i]))
            *has |= UINT64_C(1) << (i - ct_schema_records[record].first);
    }
}
